import { ToolchainError, type StepError } from '../common/errors.js';
import type { CallContext } from './call-context.js';
import { performCall } from './call.js';
import type { CallOwner, CallSite, CallWatcher, RetryReport } from './types.js';
import type { FallbackKind } from '../run-model/step-record.js';

// A call whose outcome is awaited as a value, for callers that answer each call on its own (a
// model's batch of calls, the MCP server): failures are values, never rejections, so one call's
// failure cannot reject the batch. The caller's signal settles the call at once with ABORTED,
// aborting the attempt in flight; a tool that ignores its signal cannot hold the answer.

export type CallOutcome =
  | { readonly ok: true; readonly value: unknown; readonly attempts: number; readonly fallback?: FallbackKind }
  | { readonly ok: false; readonly error: StepError; readonly attempts: number };

export interface OutcomeOptions {
  readonly signal?: AbortSignal;
  /** Each attempt as it starts. */
  readonly onAttempt?: (ctx: CallContext) => void;
  readonly onRetry?: (report: RetryReport) => void;
}

export function failedOutcome(error: StepError, attempts = 0): CallOutcome {
  return { ok: false, error, attempts };
}

export function callForOutcome(owner: CallOwner, site: CallSite, args: Record<string, unknown>, options: OutcomeOptions = {}): Promise<CallOutcome> {
  const { signal } = options;
  const cancelled = (): ToolchainError => new ToolchainError('ABORTED', `the call to ${site.callee.describe} was cancelled`);
  if (signal?.aborted) return Promise.resolve(failedOutcome(cancelled()));
  return new Promise<CallOutcome>((resolve) => {
    let current: CallContext | undefined;
    let done = false;
    const finish = (outcome: CallOutcome): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = (): void => {
      const reason = cancelled();
      current?.abort(reason);
      finish(failedOutcome(reason, current?.attempt ?? 0));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const watcher: CallWatcher = {
      live: () => !done,
      settlesOnAbort: true,
      attempt(_key, ctx) {
        current = ctx;
        options.onAttempt?.(ctx);
      },
      retrying: (_key, report) => options.onRetry?.(report),
      succeeded: (_key, value, attempts, fallback) => finish({ ok: true, value, attempts, ...(fallback ? { fallback } : {}) }),
      failed: (_key, error, attempts) => finish(failedOutcome(error, attempts)),
    };
    performCall({ owner, site, watcher, key: 0, args, scope: undefined, item: undefined });
  });
}
