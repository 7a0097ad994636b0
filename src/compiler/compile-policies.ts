import { parseDuration } from '../expr/duration.js';
import type { BackoffPolicy, RetryPolicy } from './plan.js';
import type { Retry } from './chain-file.generated.js';

// Defaults chosen to match what users of Step Functions and Temporal expect: one attempt unless
// asked, exponential backoff from 1 s doubling up to 30 s, with full jitter.
export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 1000, factor: 2, maxMs: 30_000, jitter: 'full' });
export const NO_RETRY: RetryPolicy = Object.freeze({ maxAttempts: 1, backoff: DEFAULT_BACKOFF });

/** Schema-checked `retry` to a policy; durations are already known to parse. */
export function compileRetry(retry: Retry | undefined): RetryPolicy {
  if (!retry) return NO_RETRY;
  const b = retry.backoff ?? {};
  const backoff: BackoffPolicy = {
    initialMs: parseDuration(b.initial) ?? DEFAULT_BACKOFF.initialMs,
    factor: b.factor ?? DEFAULT_BACKOFF.factor,
    maxMs: parseDuration(b.max) ?? DEFAULT_BACKOFF.maxMs,
    jitter: b.jitter ?? DEFAULT_BACKOFF.jitter,
  };
  return Object.freeze({
    maxAttempts: retry.max_attempts ?? 1,
    backoff: Object.freeze(backoff),
    ...(retry.retry_on ? { retryOn: new Set(retry.retry_on) } : {}),
  });
}
