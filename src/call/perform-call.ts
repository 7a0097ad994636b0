import pRetry from 'p-retry';
import type { StepError } from '../common/errors.js';
import { attempt, prepare } from './attempt.js';
import { backoffDelay, isRetryable } from './backoff.js';
import type { CallContext } from './call-context.js';
import { CallFailure, toStepError } from './classify.js';
import { canCallDirectly, directAttempt } from './direct-call.js';
import type { CallOwner, CallSite, CallWatcher } from './types.js';

// One call through all its attempts (SPEC §2.7), its outcome reported to `watcher` under `key`.
//
// A call with one attempt and no fallback — most steps — costs one attempt's promise and nothing
// else. A call with a retry policy goes through p-retry: `shouldRetry` applies `retry_on`, reports
// the retry and waits the backoff on the owner's clock (full jitter from the owner's random
// source), so fake clocks drive retries in tests and a stopping owner ends the wait. After the
// last attempt fails comes the fallback: another call (other arguments or another tool), then a
// fixed output.

/**
 * `args` are resolved but not yet validated; `scope` is passed back to the fallback to resolve its
 * overrides (a step's run context); `item` is the for_each element the call works on. `unresolved`
 * says the arguments could not be resolved at all: no attempt is made, but the fallback still is.
 * `fresh`: `args` were made for this call (Tool.prepare); a call with a fallback copies them all
 * the same, since the fallback's overrides are merged over them as they were.
 * (Positional parameters: this is on every step's path, and an options object would cost an
 * allocation per call.)
 */
export function performCall(
  owner: CallOwner,
  site: CallSite,
  watcher: CallWatcher,
  key: number,
  args: Record<string, unknown>,
  scope: unknown,
  item: number | undefined,
  unresolved: StepError | undefined,
  fresh = false,
): void {
  if (site.retry.maxAttempts > 1 || site.fallback !== undefined || site.fallbackOutput !== undefined) {
    void withPolicy(owner, site, watcher, key, args, scope, item, unresolved);
    return;
  }
  if (unresolved !== undefined) return watcher.failed(key, unresolved, 0);
  const prepared = prepare(site.callee, args, site.invalid, fresh);
  if (!prepared.ok) return watcher.failed(key, prepared.error, 0);
  if (canCallDirectly(site, site.callee, watcher)) return directAttempt(owner, site, site.callee, prepared.args, watcher, key, item);
  attempt(owner, site, site.callee, prepared.args, 1, watcher, key, item).then(
    (value) => watcher.succeeded(key, value, 1, undefined),
    (thrown: unknown) => watcher.failed(key, toStepError(thrown, owner.debug), 1),
  );
}

async function withPolicy(
  owner: CallOwner,
  site: CallSite,
  watcher: CallWatcher,
  key: number,
  args: Record<string, unknown>,
  scope: unknown,
  item: number | undefined,
  unresolved: StepError | undefined,
): Promise<void> {
  let error = unresolved;
  let attempts = 0;
  let duration = 0;
  if (error === undefined) {
    const prepared = prepare(site.callee, args, site.invalid);
    if (prepared.ok) {
      const policy = site.retry;
      let began = 0;
      let current: CallContext | undefined;
      const tracker: CallWatcher = {
        live: (k) => watcher.live(k),
        settlesOnAbort: watcher.settlesOnAbort,
        attempt(k, ctx) {
          current = ctx;
          watcher.attempt(k, ctx);
        },
        retrying: (k, report) => watcher.retrying(k, report),
        succeeded: (k, value, n, fallback) => watcher.succeeded(k, value, n, fallback),
        failed: (k, e, n) => watcher.failed(k, e, n),
      };
      try {
        const value = await pRetry(
          (n) => {
            attempts = n;
            if (owner.observed) began = owner.clock.now();
            return attempt(owner, site, site.callee, prepared.args, n, tracker, key, item).catch((thrown: unknown) => {
              throw new CallFailure(toStepError(thrown, owner.debug));
            });
          },
          {
            retries: policy.maxAttempts - 1,
            // The delay is ours (backoffDelay on the owner's clock, below): p-retry waits nothing.
            minTimeout: 0,
            maxTimeout: 0,
            factor: 1,
            onFailedAttempt: () => {
              if (owner.observed) duration = owner.clock.now() - began;
            },
            shouldRetry: async ({ error: thrown, attemptNumber }) => {
              const failure = toStepError(thrown, owner.debug);
              if (!watcher.live(key) || !isRetryable(policy, failure.code)) return false;
              const delay = backoffDelay(policy.backoff, attemptNumber, owner.random);
              watcher.retrying(key, { attempt: attemptNumber, error: failure, duration_ms: duration, delay_ms: delay, fallback: undefined });
              await current!.wait(delay);
              return watcher.live(key);
            },
          },
        );
        return watcher.succeeded(key, value, attempts, undefined);
      } catch (thrown) {
        error = toStepError(thrown, owner.debug);
      }
      if (!watcher.live(key)) return;
    } else {
      error = prepared.error;
    }
  }

  const fallback = site.fallback;
  if (fallback !== undefined) {
    watcher.retrying(key, { attempt: attempts, error, duration_ms: duration, delay_ms: 0, fallback: fallback.kind });
    attempts++;
    try {
      const prepared = prepare(fallback.callee, fallback.args(args, scope), fallback.invalid);
      if (!prepared.ok) throw new CallFailure(prepared.error);
      const value = await attempt(owner, site, fallback.callee, prepared.args, attempts, watcher, key, item);
      return watcher.succeeded(key, value, attempts, fallback.kind);
    } catch (thrown) {
      error = toStepError(thrown, owner.debug);
    }
    if (!watcher.live(key)) return;
  }
  if (site.fallbackOutput !== undefined) return watcher.succeeded(key, site.fallbackOutput.value, attempts, 'output');
  watcher.failed(key, error, attempts);
}
