import type { FastifyInstance } from 'fastify';
import { boundedDetail, boundedEvents, Budget } from './bounded-values.js';
import { listRunsSchema, rerunSchema, runParamsSchema, startRunSchema, type RUN_STATUSES } from './route-schemas.js';
import { ServiceError, type RunService } from './run-service.js';
import type { Gauge } from './server-limits.js';
import { streamEvents } from './sse.js';

// The runs API of `toolchain serve`: start, list, show, events (SSE), cancel, resume, rerun. The routes only
// translate HTTP to the RunService and back.

export interface RunRoutesOptions {
  readonly service: RunService;
  /** Resolves when the server starts shutting down: open event streams end then. */
  readonly stopping: Promise<void>;
  readonly heartbeatMs: number;
  /** Open event streams, against their cap. */
  readonly streams: Gauge;
  readonly retryAfterS: number;
  /** What one answer carries of a run's values (bounded-values.ts). */
  readonly valueBytes: number;
  readonly answerBytes: number;
}

export function registerRunRoutes(app: FastifyInstance, { service, stopping, heartbeatMs, streams, retryAfterS, valueBytes, answerBytes }: RunRoutesOptions): void {
  app.post<{ Body: { chain: string; input?: Record<string, unknown>; run_id?: string }; Querystring: { wait: boolean } }>(
    '/api/runs',
    { schema: startRunSchema },
    async (req, reply) => {
      const { chain, input = {}, run_id } = req.body;
      const wait = req.query.wait;
      const outcome = await service.start(chain, input, { wait, ...(run_id !== undefined ? { runId: run_id } : {}) });
      if (outcome.result !== undefined) return reply.code(200).send(outcome.result);
      return reply.code(202).header('location', `/api/runs/${encodeURIComponent(outcome.run_id)}`).send({ run_id: outcome.run_id });
    },
  );

  app.get<{ Querystring: { status?: (typeof RUN_STATUSES)[number]; chain?: string; limit: number } }>('/api/runs', { schema: listRunsSchema }, async (req) => {
    // A stored run that cannot be read back is reported next to the others, not a failed list.
    const unreadable: Unreadable[] = [];
    const onCorrupt = (e: { code: string; message: string }): void => void unreadable.push(unreadableRun(e));
    const runs = await service.list({ limit: req.query.limit, onCorrupt, ...(req.query.status ? { status: req.query.status } : {}), ...(req.query.chain ? { chain: req.query.chain } : {}) });
    return { runs, unreadable };
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id', { schema: runParamsSchema }, async (req) => {
    const run = await service.get(req.params.id);
    if (!run) throw notFound(req.params.id);
    return boundedDetail(run, new Budget(valueBytes, answerBytes));
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id/events', { schema: runParamsSchema }, async (req, reply) => {
    // Counted before the run is looked up: a stream past the cap costs no store read.
    if (!streams.take()) throw new ServiceError(503, 'TOO_MANY_STREAMS', `this server has ${streams.max} event streams open, its limit; try again later`, retryAfterS);
    try {
      const events = await service.events(req.params.id);
      if (!events) throw notFound(req.params.id);
      const last = Number(req.headers['last-event-id']);
      const after = Number.isInteger(last) && last > 0 ? last : 0;
      reply.hijack();
      await streamEvents(reply.raw, boundedEvents(req.params.id, events, new Budget(valueBytes, answerBytes), after), { after, heartbeatMs, stop: stopping });
    } finally {
      streams.give();
    }
  });

  app.post<{ Params: { id: string } }>('/api/runs/:id/cancel', { schema: runParamsSchema }, async (req) => service.cancel(req.params.id));

  app.post<{ Params: { id: string } }>('/api/runs/:id/resume', { schema: runParamsSchema }, async (req, reply) => {
    const outcome = await service.resume(req.params.id);
    return reply.code(202).send({ run_id: outcome.run_id });
  });

  // A new run: 202 with its id (and where to read it), like a run started without `wait`.
  app.post<{ Params: { id: string }; Body: { from?: string; input?: Record<string, unknown>; allow_changed?: boolean } | undefined }>('/api/runs/:id/rerun', { schema: rerunSchema }, async (req, reply) => {
    const { from, input, allow_changed } = req.body ?? {};
    const outcome = await service.rerun(req.params.id, { ...(from !== undefined ? { from } : {}), ...(input !== undefined ? { input } : {}), ...(allow_changed === true ? { allowChanged: true } : {}) });
    return reply.code(202).header('location', `/api/runs/${encodeURIComponent(outcome.run_id)}`).send({ run_id: outcome.run_id });
  });
}

interface Unreadable {
  readonly id?: string;
  readonly code: string;
  readonly message: string;
}

/** The run's id and what is wrong with it; the store's address (which may hold a password) is left out. */
function unreadableRun(e: { code: string; message: string }): Unreadable {
  const m = /(?:^|: )(run (\S+) cannot be read: [\s\S]*)$/.exec(e.message);
  return m ? { id: m[2]!, code: e.code, message: m[1]! } : { code: e.code, message: e.message };
}

function notFound(id: string): ServiceError {
  return new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${id}'`);
}
