import type { FastifyInstance } from 'fastify';
import { ERROR_KINDS, ToolchainError } from '../common/errors.js';
import type { Engine } from '../engine/types.js';
import type { TriggerUpdate, TriggerView } from '../triggers/views.js';
import { liveEvents } from './live-events.js';
import { listTriggersSchema, pauseTriggerSchema, resumeTriggerSchema } from './route-schemas.js';
import { ServiceError } from './run-service.js';
import type { Gauge } from './server-limits.js';
import { streamEvents } from './sse.js';

// The triggers API of `toolchain serve`: every trigger of the loaded chains as `toolchain
// triggers --json` shows it, pausing and resuming one (or all of a chain's), and an event stream
// of what this server's trigger loop does (ticks fired and skipped, pauses and resumes it saw).
// A pause is the run store's record, so it holds in every process on the store. Who paused is
// the server's word for the caller, as for approvals: `token` or `local`, never the request's.

export interface TriggerRoutesOptions {
  /** The name a pause made over HTTP is recorded with. */
  readonly decider: string;
  /** Resolves when the server starts shutting down: the event stream ends then. */
  readonly stopping: Promise<void>;
  readonly heartbeatMs: number;
  /** Open event streams, against their cap (shared with the runs' streams). */
  readonly streams: Gauge;
  readonly retryAfterS: number;
}

/** A refusal as its answer: a name no loaded chain or trigger has is 404, a chain whose file has a problem 409, the store away 503. */
function asServiceError(error: unknown): never {
  if (!(error instanceof ToolchainError)) throw error;
  if (error.code === 'CHAIN_NOT_FOUND' || error.code === 'TRIGGER_NOT_FOUND') throw new ServiceError(404, error.code, error.message);
  if (error.code === 'STORE_UNAVAILABLE' || error.code === 'STORE_WRITE_FAILED') throw new ServiceError(503, error.code, error.message);
  const kind = ERROR_KINDS[error.code];
  if (kind === 'usage') throw new ServiceError(400, error.code, error.message);
  if (kind === 'definition') throw new ServiceError(409, error.code, error.message);
  throw error;
}

export function registerTriggerRoutes(app: FastifyInstance, engine: Engine, { decider, stopping, heartbeatMs, streams, retryAfterS }: TriggerRoutesOptions): void {
  app.get<{ Querystring: { chain?: string } }>('/api/triggers', { schema: listTriggersSchema }, async (req): Promise<{ triggers: TriggerView[] }> => {
    const chain = req.query.chain;
    return { triggers: (await engine.triggers.list()).filter((t) => chain === undefined || t.chain === chain) };
  });

  app.post<{ Params: { key: string }; Body: { reason?: string } | null }>('/api/triggers/:key/pause', { schema: pauseTriggerSchema }, async (req): Promise<{ triggers: TriggerUpdate[] }> => {
    const reason = req.body?.reason;
    try {
      return { triggers: await engine.triggers.pause(req.params.key, { by: decider, ...(reason !== undefined && reason.trim() !== '' ? { reason } : {}) }) };
    } catch (error) {
      return asServiceError(error);
    }
  });

  app.post<{ Params: { key: string } }>('/api/triggers/:key/resume', { schema: resumeTriggerSchema }, async (req): Promise<{ triggers: TriggerUpdate[] }> => {
    try {
      return { triggers: await engine.triggers.resume(req.params.key) };
    } catch (error) {
      return asServiceError(error);
    }
  });

  app.get('/api/triggers/events', async (_req, reply) => {
    if (!streams.take()) throw new ServiceError(503, 'TOO_MANY_STREAMS', `this server has ${streams.max} event streams open, its limit; try again later`, retryAfterS);
    try {
      reply.hijack();
      // Live only: nothing is replayed, so a reconnecting client's Last-Event-ID has nothing to skip.
      await streamEvents(reply.raw, liveEvents(engine.triggers.listen), { after: 0, heartbeatMs, stop: stopping });
    } finally {
      streams.give();
    }
  });
}
