import type { ChainPlan } from '../compiler/plan.js';
import type { Run } from './run.js';
import { runChain } from './run-chain.js';
import type { ExecutionOptions, RunScope } from './types.js';
import type { RunResult } from '../run-model/result.js';

/**
 * Runs a sub-chain's plan as a child of `run`: same engine, same tools, same listener and
 * approver. With `key` (the calling step's key) its steps are recorded and restored under
 * `key›name`; without (a chain an agent's model called) they are neither. A sub-chain with
 * failure handling runs its handlers inside the child, under the same prefix.
 */
export function runChild(run: Run, plan: ChainPlan, input: unknown, signal: AbortSignal, step: string, key: string | undefined): Promise<RunResult> {
  const { onEvent, approve, options } = run;
  const recorded = key !== undefined ? { recorder: options.recorder, restored: options.restored, waits: options.waits } : {};
  const mocks = options.mocks?.child(step);
  const childOptions: ExecutionOptions = { signal, onEvent, approve, concurrency: options.concurrency, debug: run.debug, onProgress: options.onProgress, ...recorded, ...(mocks ? { mocks } : {}) };
  const scope: RunScope = { parent: { run_id: run.runId, step }, keyPrefix: `${run.keyPrefix}${key ?? step}›`, rootRunId: run.rootRunId, depth: run.depth + 1 };
  return runChain(run.host, plan, childOptions, scope, run.bound.tools, input);
}
