import type { RunWaits, CallOutcome, RetryPolicy, RetryReport } from '../../call/index.js';
import type { Clock } from '../../common/clock.js';
import { failureCode, ToolchainError } from '../../common/errors.js';
import type { EventListener, LogEntry } from '../../run-model/events.js';
import type { ApproveCallback } from '../../registry/types.js';
import { DEFAULT_MAX_RESULT_CHARS } from './tool-message.js';

// What a caller may set for a batch of calls, checked up front (a bad option is the one thing
// executeToolCalls rejects for) and turned into the settings each call reads.

export interface CallRetryOptions {
  /** Total attempts, the first included (default 1: a model that reads the error often does better than the same call again). */
  readonly maxAttempts: number;
  /** First wait in ms (default 100); later waits grow by `factor` (default 2), with full jitter, up to `maxMs` (default 2000). */
  readonly initialMs?: number;
  readonly factor?: number;
  readonly maxMs?: number;
  /** Only these error codes are retried (default: all but validation errors, refusals and cancellations, as for steps). */
  readonly retryOn?: readonly string[];
}

/** What happened to one call, for events and metrics (the message itself is the return value). */
export interface ToolCallReport {
  readonly id: string;
  /** The name the model used. */
  readonly name: string;
  /** What it resolved to; undefined for an unknown name. */
  readonly target?: { readonly kind: 'tool' | 'chain'; readonly name: string };
  readonly is_error: boolean;
  /** The error code when it failed. */
  readonly code?: string;
  readonly attempts: number;
  readonly duration_ms: number;
}

export interface ExecuteOptions {
  /** Cancels every call still running; each answers with ABORTED. */
  readonly signal?: AbortSignal;
  /** Asked before each call of a dangerous tool; without it such calls are refused. */
  readonly approve?: ApproveCallback;
  /** Longest `content` of an answer, in characters (default 20 000); longer results are cut and marked. */
  readonly maxResultChars?: number;
  /** Bounds each tool call in ms instead of the tool's own `timeout`; bounds chain calls too (their own `timeout` still applies). */
  readonly timeoutMs?: number;
  readonly retry?: CallRetryOptions;
  /** At most this many calls of the batch at once (default 8); the others wait for a place, in order. */
  readonly concurrency?: number;
  /** The run id tools see in `ctx.run_id` and approval requests (default: a new UUID per batch). */
  readonly runId?: string;
  /**
   * Where an approver's 'wait' becomes an approval request (an agent step's run keeps them), and
   * the key of a call's request (`label`: the call's id). Without them, 'wait' refuses the call.
   */
  readonly waits?: RunWaits;
  readonly waitKey?: (label: string) => string;
  /** Where tools' `ctx.log()` lines go. */
  readonly log?: (entry: LogEntry) => void;
  /** Events of the chain runs that calls start. */
  readonly onEvent?: EventListener;
  /** Called as each call finishes. */
  readonly onCall?: (report: ToolCallReport) => void;
  /** Told when each call to a known name starts; follows it to its end (an agent step turns this into step events). */
  readonly watch?: (call: { readonly id: string; readonly name: string }) => CallProgress;
  /** Time for timeouts and backoff waits (default: the system clock); tests and agent steps pass the engine's. */
  readonly clock?: Clock;
  /** Uniform in [0, 1) for backoff jitter (default Math.random). */
  readonly random?: () => number;
}

/** How one call of a batch is going, from its start (when `watch` is asked) to its end. */
export interface CallProgress {
  retrying(report: RetryReport): void;
  finished(outcome: CallOutcome): void;
}

export interface ExecuteSettings {
  readonly maxResultChars: number;
  readonly timeoutMs: number | undefined;
  readonly retry: RetryPolicy;
  readonly concurrency: number;
}

/** Calls of one batch at once, unless the caller says otherwise. */
export const DEFAULT_CALL_CONCURRENCY = 8;

function check(name: string, value: unknown, min: number, integer: boolean): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    const want = integer ? `a whole number of at least ${min}` : `a number of at least ${min}`;
    throw new ToolchainError('USAGE', `option '${name}' must be ${want}, got ${JSON.stringify(value) ?? String(value)}`);
  }
}

export function checkExecuteOptions(options: ExecuteOptions): ExecuteSettings {
  check('maxResultChars', options.maxResultChars, 100, true);
  check('timeoutMs', options.timeoutMs, 1, false);
  const retry = options.retry;
  check('retry.maxAttempts', retry?.maxAttempts, 1, true);
  check('retry.initialMs', retry?.initialMs, 0, false);
  check('retry.factor', retry?.factor, 0, false);
  check('retry.maxMs', retry?.maxMs, 0, false);
  check('concurrency', options.concurrency, 1, true);
  return {
    concurrency: options.concurrency ?? DEFAULT_CALL_CONCURRENCY,
    maxResultChars: options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    timeoutMs: options.timeoutMs,
    retry: {
      maxAttempts: retry?.maxAttempts ?? 1,
      backoff: { initialMs: retry?.initialMs ?? 100, factor: retry?.factor ?? 2, maxMs: retry?.maxMs ?? 2000, jitter: 'full' },
      ...(retry?.retryOn ? { retryOn: new Set(retry.retryOn.map(failureCode)) } : {}),
    },
  };
}
