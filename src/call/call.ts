import { ToolchainError, type StepError } from '../common/errors.js';
import { race } from '../common/race.js';
import type { DirectCall, PrepareResult } from '../registry/types.js';
import { checkApproval } from './approval.js';
import { backoffDelay, isRetryable } from './backoff.js';
import { CallContext, toStepError } from './call-context.js';
import type { Callee, CallOwner, CallSite, CallWatcher, InvalidWording } from './types.js';

// One call through all its attempts, its outcome reported to `watcher` under `key`: attempts
// while the retry policy allows (waiting the backoff on the owner's clock, with full jitter from
// the owner's random source, so fake clocks drive retries in tests and a stopping owner ends the
// wait), then the fallback — another call (other arguments or another tool), then a fixed output.
// Below the loop: one attempt (`attempt`), and the direct call of a quick tool (`directAttempt`).
//
// The attempt loop is ours rather than p-retry's: the engine decides every delay (its backoff on
// its clock), whether to retry (retry_on, a stopped owner) and what to report between attempts,
// which left p-retry nothing to do but count.

/** One call to make. */
export interface CallRequest {
  readonly owner: CallOwner;
  readonly site: CallSite;
  readonly watcher: CallWatcher;
  /** What the watcher's reports are keyed by (a step's index, a for_each element's). */
  readonly key: number;
  /** Resolved, not yet validated. */
  readonly args: Record<string, unknown>;
  /** Passed back to the fallback to resolve its overrides (a step's run context). */
  readonly scope: unknown;
  /** The for_each element the call works on. */
  readonly item: number | undefined;
  /** The arguments could not be resolved at all: no attempt is made, but the fallback still is. */
  readonly unresolved?: StepError;
  /** `args` were made for this call, so validation may fill defaults into them in place. */
  readonly fresh?: boolean;
}

export function performCall(request: CallRequest): void {
  const { owner, site, watcher, key } = request;
  if (site.retry.maxAttempts > 1 || site.fallback !== undefined || site.fallbackOutput !== undefined) {
    void withPolicy(request);
    return;
  }
  if (request.unresolved !== undefined) return watcher.failed(key, request.unresolved, 0);
  const prepared = prepare(site.callee, request.args, site.invalid, request.fresh);
  if (!prepared.ok) return watcher.failed(key, prepared.error, 0);
  // Most steps: one attempt of a tool nothing has to race, called at once (directAttempt, below).
  if (canCallDirectly(site, site.callee, watcher)) return directAttempt(owner, site, site.callee, prepared.args, watcher, key, request.item);
  attempt(owner, site, site.callee, prepared.args, 1, watcher, key, request.item).then(
    (value) => watcher.succeeded(key, value, 1, undefined),
    (thrown: unknown) => watcher.failed(key, toStepError(thrown, owner.debug), 1),
  );
}

async function withPolicy(request: CallRequest): Promise<void> {
  const { owner, site, watcher, key, args, item } = request;
  let error = request.unresolved;
  let attempts = 0;
  let duration = 0;
  if (error === undefined) {
    // With a fallback, the fallback's overrides are merged over the arguments as they were: they
    // are validated as a copy (never `fresh`).
    const prepared = prepare(site.callee, args, site.invalid);
    if (!prepared.ok) error = prepared.error;
    else {
      const policy = site.retry;
      let context: CallContext | undefined;
      // The watcher, noting each attempt's context: the backoff waits on it, so a stop ends the wait.
      const tracker: CallWatcher = {
        live: (k) => watcher.live(k),
        settlesOnAbort: watcher.settlesOnAbort,
        attempt(k, ctx) {
          context = ctx;
          watcher.attempt(k, ctx);
        },
        retrying: (k, report) => watcher.retrying(k, report),
        succeeded: (k, value, n, kind) => watcher.succeeded(k, value, n, kind),
        failed: (k, e, n) => watcher.failed(k, e, n),
      };
      for (;;) {
        attempts++;
        const began = owner.observed ? owner.clock.now() : 0;
        try {
          const value = await attempt(owner, site, site.callee, prepared.args, attempts, tracker, key, item);
          return watcher.succeeded(key, value, attempts, undefined);
        } catch (thrown) {
          error = toStepError(thrown, owner.debug);
          if (owner.observed) duration = owner.clock.now() - began;
        }
        if (!watcher.live(key)) return;
        if (attempts >= policy.maxAttempts || !isRetryable(policy, error.code)) break;
        const delay = backoffDelay(policy.backoff, attempts, owner.random);
        watcher.retrying(key, { attempt: attempts, error, duration_ms: duration, delay_ms: delay, fallback: undefined });
        await context!.wait(delay);
        if (!watcher.live(key)) return;
      }
    }
  }

  // A wait that is not over is no failure to fall back from: the step parks (wait-step.ts).
  if (error.code === 'RUN_WAITING') return watcher.failed(key, error, attempts);
  const fallback = site.fallback;
  if (fallback !== undefined) {
    watcher.retrying(key, { attempt: attempts, error, duration_ms: duration, delay_ms: 0, fallback: fallback.kind });
    attempts++;
    const prepared = prepare(fallback.callee, fallback.args(args, request.scope), fallback.invalid);
    if (!prepared.ok) error = prepared.error;
    else {
      try {
        const value = await attempt(owner, site, fallback.callee, prepared.args, attempts, watcher, key, item);
        return watcher.succeeded(key, value, attempts, fallback.kind);
      } catch (thrown) {
        error = toStepError(thrown, owner.debug);
      }
    }
    if (!watcher.live(key)) return;
  }
  if (site.fallbackOutput !== undefined) return watcher.succeeded(key, site.fallbackOutput.value, attempts, 'output');
  watcher.failed(key, error, attempts);
}

// One attempt of a call: approval when the callee is dangerous (the deadline covers the
// call, not the wait for a human), a fresh context, then the callee's invoke under the attempt's
// deadline. The deadline is a timer on the owner's clock that aborts the context, which lets the
// waiter go even when the tool ignores its signal.

type Prepared = Extract<PrepareResult, { ok: true }> | { readonly ok: false; readonly error: StepError };

/** Validated arguments, or VALIDATION_FAILED worded by the caller's rules. */
function prepare(callee: Callee, args: Record<string, unknown>, invalid: InvalidWording, fresh = false): Prepared {
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

function attempt(
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

// The one-attempt call of a callee that can be called directly (a tool with no cache and no
// breaker: Callee.direct), when nothing has to race it (no deadline, not dangerous, a watcher that
// does not settle on abort): the handler runs at once, a value it returns is checked and reported
// before this returns, and a promise gets exactly one reaction. The general path (`attempt`)
// costs an async wrapper, a `then` and a race around the same call, which the bench shows to be a
// large share of a quick tool's step (docs/internals/development.md, on when a fast path may stay).

/** True when `site`'s single attempt can go through `directAttempt`. */
function canCallDirectly(site: CallSite, callee: Callee, watcher: CallWatcher): boolean {
  return callee.direct !== undefined && !callee.dangerous && !watcher.settlesOnAbort && (site.timeoutMs ?? callee.timeoutMs) === undefined;
}

function directAttempt(owner: CallOwner, site: CallSite, callee: Callee, args: Record<string, unknown>, watcher: CallWatcher, key: number, item: number | undefined): void {
  const direct = callee.direct!;
  const ctx = new CallContext(owner, site.label, 1, callee, item);
  watcher.attempt(key, ctx);
  let out: unknown;
  try {
    out = direct.call(args, ctx);
  } catch (thrown) {
    return watcher.failed(key, toStepError(direct.fail(thrown), owner.debug), 1);
  }
  if (typeof (out as PromiseLike<unknown> | null)?.then === 'function') {
    (out as PromiseLike<unknown>).then(
      (value) => settle(owner, direct, watcher, key, value),
      (thrown: unknown) => watcher.failed(key, toStepError(direct.fail(thrown), owner.debug), 1),
    );
    return;
  }
  settle(owner, direct, watcher, key, out);
}

function settle(owner: CallOwner, direct: DirectCall, watcher: CallWatcher, key: number, value: unknown): void {
  let result: unknown;
  try {
    result = direct.check(value);
  } catch (thrown) {
    return watcher.failed(key, toStepError(thrown, owner.debug), 1);
  }
  watcher.succeeded(key, result, 1, undefined);
}
