import type { ExecutorHost, RunError, RunOptions, RunResult } from '../executor/index.js';

/** A run that cannot start (unknown or invalid chain): the same result and events as any failed run. */
export function failedBeforeStart(host: ExecutorHost, chain: string, runId: string | undefined, error: RunError, input: unknown, options: RunOptions): RunResult {
  const run_id = runId ?? host.newRunId();
  const timestamp = host.clock.now();
  const result: RunResult = { run_id, chain, status: 'failed', outputs: null, error, steps: {}, duration_ms: 0 };
  try {
    options.onEvent?.({ type: 'run:started', run_id, chain, timestamp, input });
    options.onEvent?.({ type: 'run:finished', run_id, chain, timestamp, status: 'failed', duration_ms: 0, outputs: null, error });
  } catch {
    // A listener's exception is its own problem.
  }
  return result;
}

