import type { ExecutorHost, RunOptions } from '../executor/index.js';
import { emitRunBounds } from '../run-model/events.js';
import type { RunError, RunResult } from '../run-model/result.js';

/** A run that cannot start (unknown or invalid chain): the same result and events as any failed run. */
export function failedBeforeStart(host: ExecutorHost, chain: string, runId: string | undefined, error: RunError, input: unknown, options: RunOptions): RunResult {
  const run_id = runId ?? host.newRunId();
  // The fields alone: an error object (a ToolchainError) keeps its message where JSON does not see it.
  const plain: RunError = { code: error.code, message: error.message, ...(error.step !== undefined ? { step: error.step } : {}) };
  const result: RunResult = { run_id, chain, status: 'failed', outputs: null, error: plain, steps: {}, duration_ms: 0 };
  if (options.onEvent) emitRunBounds(options.onEvent, result, input, host.clock.now());
  return result;
}

