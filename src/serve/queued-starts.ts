import { ToolchainError } from '../common/errors.js';
import type { Engine } from '../engine/types.js';
import { ServiceError, type StartOutcome } from './run-service.js';
import type { Gauge } from './server-limits.js';

// `toolchain serve --queue URL`: a run started over HTTP is submitted to the
// workers instead of executing in the server. The server then knows it as it knows any run
// elsewhere: from the store (list, detail, the event stream replayed from recorded steps).
// A submitted run counts against the server's runs in flight until the store says it finished,
// as a run executing here does: a client must not queue without bound through this server.

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

/** The runs in flight this server counts, and the Retry-After of a refusal. */
export interface InFlight {
  readonly gauge: Gauge;
  readonly retryAfterS: number;
}

function take({ gauge, retryAfterS }: InFlight): void {
  if (!gauge.take()) throw new ServiceError(429, 'TOO_MANY_RUNS', `this server has ${gauge.max} runs in flight, its limit; try again when some have finished`, retryAfterS);
}

export async function submitQueued(engine: Engine, chain: string, input: unknown, runId: string | undefined, wait: boolean, inFlight: InFlight): Promise<StartOutcome> {
  take(inFlight);
  const give = (): void => inFlight.gauge.give();
  let submitted;
  try {
    submitted = await engine.submit(chain, input, runId !== undefined ? { runId } : {});
  } catch (error) {
    give();
    return asServiceError(error);
  }
  // Given back once the run finished (the store's word), whether anyone waits for it or not.
  const result = submitted.result();
  void result.then(give, give);
  return wait ? { run_id: submitted.runId, result: await result } : { run_id: submitted.runId };
}

export async function resumeQueued(engine: Engine, runId: string, inFlight: InFlight): Promise<StartOutcome> {
  const stored = await engine.runs.get(runId);
  if (stored === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}'`);
  take(inFlight);
  // Enqueued now; its result is the store's once a worker finished it.
  void engine.resume(runId).then(
    () => inFlight.gauge.give(),
    () => inFlight.gauge.give(),
  );
  return { run_id: runId };
}
