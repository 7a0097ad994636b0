import type { FastifyInstance } from 'fastify';
import { ToolchainError } from '../common/errors.js';
import type { Engine } from '../engine/types.js';
import type { ApprovalView } from '../runs/approvals.js';
import { decideApprovalSchema, listApprovalsSchema, sendEventSchema } from './route-schemas.js';
import { ServiceError } from './run-service.js';

// The waits API of `toolchain serve`: events that runs wait for (`wait_for`), and the approval
// requests people decide (`approval:` steps, dangerous calls without a standing approval). The
// engine keeps both in the run store and wakes the runs they make due; these routes only
// translate HTTP to it. Who decided is the server's word for the caller, never the request's:
// `token` when the server has a token (every holder of it is the same to the server), `local`
// when it has none (only loopback reaches it).

export interface WaitRoutesOptions {
  /** The name a decision made over HTTP is recorded with. */
  readonly decider: string;
}

const STATUS: ReadonlyMap<string, 404 | 409> = new Map([
  ['APPROVAL_NOT_FOUND', 404],
  ['APPROVAL_REFUSED', 409],
]);

function asServiceError(error: unknown): never {
  if (error instanceof ToolchainError && STATUS.has(error.code)) throw new ServiceError(STATUS.get(error.code)!, error.code, error.message);
  throw error;
}

export function registerWaitRoutes(app: FastifyInstance, engine: Engine, { decider }: WaitRoutesOptions): void {
  app.post<{ Body: { name: string; payload?: unknown; id?: string } }>('/api/events', { schema: sendEventSchema }, async (req, reply) => {
    const { name, payload = null, id } = req.body;
    const sent = await engine.emit(name, payload, id !== undefined ? { id } : {});
    return reply.code(202).send({ id: sent.id, new: sent.new, delivered: sent.delivered });
  });

  app.get<{ Querystring: { run?: string } }>('/api/approvals', { schema: listApprovalsSchema }, async (req): Promise<{ approvals: ApprovalView[] }> => {
    const run = req.query.run;
    const pending = (await engine.approvals.list()).filter((a) => run === undefined || a.run_id === run);
    return { approvals: await ofLiveRuns(engine, pending) };
  });

  app.post<{ Params: { id: string }; Body: { decision: 'approve' | 'deny'; comment?: string } }>('/api/approvals/:id', { schema: decideApprovalSchema }, async (req) => {
    const { decision, comment } = req.body;
    try {
      return await engine.approvals.decide(req.params.id, { approved: decision === 'approve', by: decider, ...(comment !== undefined && comment !== '' ? { comment } : {}) });
    } catch (error) {
      return asServiceError(error);
    }
  });
}

/**
 * The requests whose run can still go on (waiting, or at work on other steps). A run that ended
 * otherwise — cancelled while it waited — may leave its request open in the store; no decision
 * would make a difference to it, so it is not offered to anyone.
 */
async function ofLiveRuns(engine: Engine, approvals: readonly ApprovalView[]): Promise<ApprovalView[]> {
  const live = new Map<string, Promise<boolean>>();
  const isLive = async (runId: string): Promise<boolean> => {
    if ((await engine.runs.wakeAt(runId)) !== undefined) return true;
    return (await engine.runs.get(runId))?.status === 'running';
  };
  for (const a of approvals) if (!live.has(a.run_id)) live.set(a.run_id, isLive(a.run_id));
  const keep = await Promise.all(approvals.map((a) => live.get(a.run_id)!));
  return approvals.filter((_, i) => keep[i]);
}
