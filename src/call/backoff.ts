import type { FailureCode } from '../common/errors.js';
import type { BackoffPolicy, RetryPolicy } from './types.js';

// Retry timing and eligibility as pure functions, so tests check them without running anything.

/**
 * The wait after failed attempt `attempt` (1-based): initial · factor^(attempt−1), capped at max;
 * with full jitter a uniform pick in [0, that] (the AWS "full jitter" scheme, which spreads
 * retrying clients best). `random` is injected so tests get exact delays. Never under 1 ms: a
 * jitter pick near zero (or a sub-millisecond `initial`) must not turn a failing tool's retries
 * into a busy loop.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** (attempt - 1));
  return Math.max(MIN_DELAY_MS, Math.round(policy.jitter === 'full' ? random() * base : base));
}

/** The shortest wait between two attempts. */
export const MIN_DELAY_MS = 1;

/**
 * Codes retrying cannot fix: the same arguments fail validation again, a refusal stays a refusal
 *, a cancelled run must not restart its steps, and sub-chains nested too deep are as
 * deep on the next attempt; a wait that is not over (RUN_WAITING) parks the step instead. INPUT_INVALID is a sub-chain's validation error and counts as one.
 */
const NEVER_RETRIED: ReadonlySet<FailureCode> = new Set<FailureCode>(['VALIDATION_FAILED', 'APPROVAL_DENIED', 'INPUT_INVALID', 'ABORTED', 'RUN_TIMEOUT', 'SUBCHAIN_TOO_DEEP', 'RUN_WAITING']);

export function isRetryable(policy: RetryPolicy, code: FailureCode): boolean {
  if (NEVER_RETRIED.has(code)) return false;
  return policy.retryOn === undefined || policy.retryOn.has(code);
}
