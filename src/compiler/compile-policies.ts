import { parseDuration } from '../expr/duration.js';
import { failureCode } from '../common/errors.js';
import type { CompiledValue } from '../expr/types.js';
import type { Fallback, Retry } from './chain-file.generated.js';
import { deepFreeze } from './deep-freeze.js';
import type { BackoffPolicy, FallbackPolicy, RetryPolicy } from './plan.js';

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
    ...(retry.retry_on ? { retryOn: new Set(retry.retry_on.map(failureCode)) } : {}),
  });
}

/** Schema-checked `fallback` to its tagged form; `value` compiles an `input_map` found at a key. */
export function compileFallback(fallback: Fallback, value: (v: unknown, key: string) => CompiledValue): FallbackPolicy {
  const input = fallback.input_map !== undefined ? value(fallback.input_map, 'input_map') : undefined;
  const output = 'output' in fallback ? { value: deepFreeze(fallback.output) } : undefined;
  if (fallback.tool !== undefined) return Object.freeze({ kind: 'tool', tool: fallback.tool, ...(input ? { input } : {}), ...(output ? { output } : {}) });
  if (input !== undefined) return Object.freeze({ kind: 'input', input, ...(output ? { output } : {}) });
  return Object.freeze({ kind: 'output', output: output ?? { value: null } });
}
