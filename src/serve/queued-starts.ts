import { ToolchainError } from '../common/errors.js';
import type { Engine } from '../engine.js';
import { ServiceError, type StartOutcome } from './run-service.js';

// `toolchain serve --queue URL`: a run started over HTTP is submitted to the
// workers instead of executing in the server. The server then knows it as it knows any run
// elsewhere: from the store (list, detail, the event stream replayed from recorded steps).

const STATUS: ReadonlyMap<string, 400 | 404 | 409 | 503> = new Map([
  ['CHAIN_NOT_FOUND', 400],
  ['INPUT_INVALID', 400],
  ['USAGE', 400],
  ['RUN_NOT_FOUND', 404],
  ['RUN_ID_CONFLICT', 409],
  ['QUEUE_UNAVAILABLE', 503],
  ['STORE_UNAVAILABLE', 503],
]);

function asServiceError(error: unknown): never {
  if (error instanceof ToolchainError) throw new ServiceError(STATUS.get(error.code) ?? 400, error.code, error.message);
  throw error;
}

export async function submitQueued(engine: Engine, chain: string, input: unknown, runId: string | undefined, wait: boolean): Promise<StartOutcome> {
  const submitted = await engine.submit(chain, input, runId !== undefined ? { runId } : {}).catch(asServiceError);
  return wait ? { run_id: submitted.runId, result: await submitted.result() } : { run_id: submitted.runId };
}

export async function resumeQueued(engine: Engine, runId: string): Promise<StartOutcome> {
  const stored = await engine.runs.get(runId);
  if (stored === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}'`);
  // Enqueued now; its result is the store's once a worker finished it.
  void engine.resume(runId).catch(() => undefined);
  return { run_id: runId };
}
