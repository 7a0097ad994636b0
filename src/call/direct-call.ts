import type { DirectCall } from '../registry/types.js';
import { CallContext } from './call-context.js';
import { toStepError } from './classify.js';
import type { Callee, CallOwner, CallSite, CallWatcher } from './types.js';

// The one-attempt call of a callee that can be called directly (a tool with no cache and no
// breaker: Callee.direct), when nothing has to race it (no deadline, not dangerous, a watcher that
// does not settle on abort): the handler runs at once, a value it returns is checked and reported
// before this returns, and a promise gets exactly one reaction. The general path (attempt.ts)
// costs an async wrapper, a `then` and a race around the same call; per step of a chain of quick
// tools that was a third of the engine's time.

/** True when `site`'s single attempt can go through `directAttempt`. */
export function canCallDirectly(site: CallSite, callee: Callee, watcher: CallWatcher): boolean {
  return callee.direct !== undefined && !callee.dangerous && !watcher.settlesOnAbort && (site.timeoutMs ?? callee.timeoutMs) === undefined;
}

export function directAttempt(owner: CallOwner, site: CallSite, callee: Callee, args: Record<string, unknown>, watcher: CallWatcher, key: number, item: number | undefined): void {
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
