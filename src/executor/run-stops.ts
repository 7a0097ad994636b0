import type { Clock } from '../common/clock.js';
import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunError } from '../run-model/result.js';

/**
 * What can stop a run from outside its steps: its chain's `timeout` (RUN_TIMEOUT) and its caller's
 * signal (ABORTED — or the code of the ToolchainError the signal was aborted with: a run store that
 * cannot be written stops the run with STORE_WRITE_FAILED). Returns what disarms both, for when
 * the run ends first (undefined when there is nothing to arm).
 */
export function armStops(plan: ChainPlan, clock: Clock, signal: AbortSignal | undefined, run: { stop(error: RunError, code: ErrorCode): void }): (() => void) | undefined {
  // Most runs have neither. The closures below live in arm(): a function that makes closures
  // allocates the context they share on entry, before any early return.
  if (plan.timeoutMs === undefined && signal === undefined) return undefined;
  return arm(plan, clock, signal, run);
}

function arm(plan: ChainPlan, clock: Clock, signal: AbortSignal | undefined, run: { stop(error: RunError, code: ErrorCode): void }): () => void {
  const ms = plan.timeoutMs;
  const stop = (error: RunError, code: ErrorCode): void => run.stop(error, code);
  const deadline = ms === undefined ? undefined : clock.setTimeout(() => stop({ code: 'RUN_TIMEOUT', message: `the run of chain '${plan.name}' exceeded its timeout of ${ms} ms` }, 'RUN_TIMEOUT'), ms);
  const onAbort = (): void => {
    const reason: unknown = signal!.reason;
    if (reason instanceof ToolchainError) stop({ code: reason.code, message: reason.message }, 'ABORTED');
    else stop({ code: 'ABORTED', message: 'the run was cancelled by its caller' }, 'ABORTED');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    if (deadline !== undefined) clock.clearTimeout(deadline);
    signal?.removeEventListener('abort', onAbort);
  };
}
