import { ToolchainError, type StepError } from '../common/errors.js';
import { race } from '../common/race.js';
import type { PrepareResult } from '../registry/types.js';
import { checkApproval } from './approval.js';
import { CallContext } from './call-context.js';
import type { Callee, CallOwner, CallSite, CallWatcher, InvalidWording } from './types.js';

// One attempt of a call: approval when the callee is dangerous (the deadline covers the
// call, not the wait for a human), a fresh context, then the callee's invoke under the attempt's
// deadline. The deadline is a timer on the owner's clock that aborts the context, which lets the
// waiter go even when the tool ignores its signal.

export type Prepared = Extract<PrepareResult, { ok: true }> | { readonly ok: false; readonly error: StepError };

/** Validated arguments, or VALIDATION_FAILED worded by the caller's rules. */
export function prepare(callee: Callee, args: Record<string, unknown>, invalid: InvalidWording, fresh = false): Prepared {
  let prepared: PrepareResult;
  try {
    prepared = callee.prepare(args, fresh);
  } catch (error) {
    // A schema compiled on first use that does not compile (PLUGIN_INVALID) fails this call only.
    if (error instanceof ToolchainError) return { ok: false, error: { code: error.code, message: error.message } };
    throw error;
  }
  if (prepared.ok) return prepared;
  return { ok: false, error: { code: 'VALIDATION_FAILED', message: invalid(callee, args, prepared.problems) } };
}

export function attempt(
  owner: CallOwner,
  site: CallSite,
  callee: Callee,
  args: Record<string, unknown>,
  n: number,
  watcher: CallWatcher,
  key: number,
  item: number | undefined,
): Promise<unknown> {
  const ctx = new CallContext(owner, site.label, n, callee, item);
  watcher.attempt(key, ctx);
  const timeoutMs = site.timeoutMs ?? callee.timeoutMs;
  if (!callee.dangerous) return invoke(ctx, callee, args, timeoutMs, watcher.settlesOnAbort);
  return checkApproval(callee, owner, { args, step: site.label, run_id: owner.runId, item }).then(() => {
    // The owner may have stopped while a human was deciding.
    if (ctx.aborted) throw ctx.abortReason;
    return invoke(ctx, callee, args, timeoutMs, watcher.settlesOnAbort);
  });
}

function invoke(ctx: CallContext, callee: Callee, args: Record<string, unknown>, timeoutMs: number | undefined, settlesOnAbort: boolean): Promise<unknown> {
  let work: Promise<unknown>;
  try {
    work = callee.invoke(args, ctx);
  } catch (error) {
    // Callees promise to reject rather than throw; a foreign one may not keep that promise.
    return Promise.reject(error as Error);
  }
  if (timeoutMs === undefined && !settlesOnAbort) return work;
  const r = race(work);
  ctx.onAbort(r.stop);
  if (timeoutMs !== undefined) {
    const timer = ctx.setTimer(() => ctx.abort(new ToolchainError('TIMEOUT', `${callee.describe} timed out after ${timeoutMs} ms (attempt ${ctx.attempt})`)), timeoutMs);
    const clear = (): void => ctx.clearTimer(timer);
    work.then(clear, clear);
  }
  return r.promise;
}
