import type { Clock } from '../common/clock.js';
import type { FailureCode, StepError } from '../common/errors.js';
import type { ApproveCallback, ArgumentProblem, DirectCall, PrepareResult, ToolProgress } from '../registry/types.js';
import type { FallbackKind } from '../run-model/step-record.js';
import type { CallContext } from './call-context.js';
import type { RunWaits } from './waits.js';

// The contract of one tool call: prepare the arguments → approve → invoke under a
// deadline with the attempt's signal → classify the error → retry with backoff → fallback. Every
// caller goes through it: a step, a for_each element, an agent's tool call, a batch of a model's
// calls, the MCP server. What differs between them is injected: who owns the call (run id,
// clock, randomness, approval, logs), where its outcome goes, and how a bad argument is worded.

/** Something a call can reach: a registry Tool, a sub-chain, an agent loop. */
export interface Callee {
  /** How messages name it: `tool 'geo/find_city'`, `chain 'city_brief'`. */
  readonly describe: string;
  /** The name an approver sees. */
  readonly qualifiedName: string;
  readonly dangerous: boolean;
  /** The callee's own deadline per attempt, used when the call sets none. */
  readonly timeoutMs?: number;
  /** The environment variables its code may read (`ctx.env`). */
  env(): Readonly<Record<string, string | undefined>>;
  /** Validates (a copy of) the arguments, defaults filled and types coerced; `fresh` and what it throws as Tool.prepare. */
  prepare(args: Record<string, unknown>, fresh?: boolean): PrepareResult;
  /** One attempt. May throw or reject; the call unit classifies whatever comes out. */
  invoke(args: Record<string, unknown>, ctx: CallContext): Promise<unknown>;
  /** `invoke` taken apart, when nothing needs to wrap the handler: see directAttempt in call.ts. */
  readonly direct?: DirectCall;
}

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: 'none' | 'full';
}

export interface RetryPolicy {
  /** Total attempts, the first included (1 = no retry). */
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /** Codes to retry; undefined = every code but those retrying cannot fix (backoff.ts). */
  readonly retryOn?: ReadonlySet<FailureCode>;
}

/** What is tried once after the last attempt fails. */
export interface FallbackCall {
  readonly kind: 'input' | 'tool';
  readonly callee: Callee;
  /** The fallback's arguments, given the primary ones (overrides merged over them). */
  args(primary: Record<string, unknown>, scope: unknown): Record<string, unknown>;
  /** How its bad arguments are worded (the overrides have sources of their own). */
  readonly invalid: InvalidWording;
}

export type InvalidWording = (callee: Callee, args: Record<string, unknown>, problems: readonly ArgumentProblem[]) => string;

/** Everything about a call that does not change from one call to the next: built once per step. */
export interface CallSite {
  /** `ctx.step`, the approval request's `step`, the label of log lines. */
  readonly label: string;
  readonly callee: Callee;
  readonly retry: RetryPolicy;
  /** Deadline of one attempt; undefined = the callee's own. */
  readonly timeoutMs: number | undefined;
  readonly invalid: InvalidWording;
  readonly fallback: FallbackCall | undefined;
  /** A fixed output used when everything else failed (with or without a fallback call before it). */
  readonly fallbackOutput: { readonly value: unknown } | undefined;
}

/** Who makes calls: a run, or a batch of a model's calls. Shared by all its calls. */
export interface CallOwner {
  readonly runId: string;
  readonly clock: Clock;
  /** Uniform in [0, 1): backoff jitter. */
  readonly random: () => number;
  readonly approve: ApproveCallback | undefined;
  /** Someone listens: time attempts so that retry reports carry durations. */
  readonly observed: boolean;
  /** Keep handlers' stacks in their StepErrors (`--debug`). */
  readonly debug?: boolean;
  /** `RUN_ID:STEP_KEY` for a call's label and for_each element. */
  idempotencyKey(label: string, item: number | undefined): string;
  /** Where the owner's waits are kept (a dangerous call's approval request); absent where nothing can wait. */
  readonly waits?: RunWaits;
  /** The step key, in the top run, of a call's label and for_each element (what its waits are keyed by). */
  waitKey?(label: string, item: number | undefined): string;
  /** A tool's `ctx.log` line; `item`: the for_each element the attempt works on. */
  log(label: string, attempt: number, message: string, fields: Record<string, unknown> | undefined, item: number | undefined): void;
  /** A call reported how far it has got (ctx.progress); absent where nobody listens. */
  callProgress?(label: string, attempt: number, item: number | undefined, report: ToolProgress): void;
}

/** An attempt failed and something follows it: another attempt after `delay_ms`, or the fallback. */
export interface RetryReport {
  /** The attempt that failed (1-based). */
  readonly attempt: number;
  readonly error: StepError;
  /** How long it took (0 when nobody observes the owner). */
  readonly duration_ms: number;
  readonly delay_ms: number;
  readonly fallback: FallbackKind | undefined;
}

/**
 * Where a call's progress and outcome go. One watcher serves many calls, told apart by `key`
 * (a step index, an element index, a call's position), so a call allocates no watcher of its own.
 */
export interface CallWatcher {
  /** False once the outcome would be dropped (the run stopped, the batch was cancelled). */
  live(key: number): boolean;
  /** True when an abort must settle the call at once, even if the tool ignores its signal. */
  readonly settlesOnAbort: boolean;
  /** A new attempt began: the context is what aborting it goes through. */
  attempt(key: number, ctx: CallContext): void;
  retrying(key: number, report: RetryReport): void;
  succeeded(key: number, value: unknown, attempts: number, fallback: FallbackKind | undefined): void;
  failed(key: number, error: StepError, attempts: number): void;
}
