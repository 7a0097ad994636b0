import type { TimerHandle } from '../common/clock.js';
import { failureCode, ToolchainError, type StepError } from '../common/errors.js';
import type { ToolContext, ToolProgress } from '../registry/types.js';
import type { Callee, CallOwner } from './types.js';

// An attempt as the callee sees it: the `ctx` it is given (CallContext), and what becomes of
// whatever it throws (toStepError, at the end).
//
// The `ctx` a tool receives, one per attempt, for every kind of caller. Its
// AbortSignal is made only when somebody reads `ctx.signal`: an AbortController costs
// microseconds on Node 20, more than the rest of a step. Aborting an attempt whose signal nobody
// read just records the reason (a later read gets an already-aborted signal), clears the
// attempt's one timer (its timeout or the backoff wait after it), and lets go of whoever waits
// for the attempt (`onAbort`).

export class CallContext implements ToolContext {
  readonly run_id: string;
  readonly step: string;
  readonly attempt: number;
  /** The for_each element this attempt works on. */
  readonly item: number | undefined;
  private readonly owner: CallOwner;
  private readonly callee: Callee;
  private controller: AbortController | undefined = undefined;
  private reason: Error | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;
  private stopWaiter: ((reason: Error) => void) | undefined = undefined;

  constructor(owner: CallOwner, label: string, attempt: number, callee: Callee, item: number | undefined) {
    this.owner = owner;
    this.callee = callee;
    this.run_id = owner.runId;
    this.step = label;
    this.attempt = attempt;
    this.item = item;
  }

  /** `RUN_ID:STEP_KEY`: the same for every attempt, so external effects can be made idempotent. */
  get idempotencyKey(): string {
    return this.owner.idempotencyKey(this.step, this.item);
  }

  get env(): Readonly<Record<string, string | undefined>> {
    return this.callee.env();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get abortReason(): Error | undefined {
    return this.reason;
  }

  log(message: string, fields?: Record<string, unknown>): void {
    try {
      this.owner.log(this.step, this.attempt, message, fields, this.item);
    } catch {
      // A logger's failure is not the tool's.
    }
  }

  progress(report: ToolProgress): void {
    if (this.reason !== undefined) return;
    try {
      this.owner.callProgress?.(this.step, this.attempt, this.item, report);
    } catch {
      // A listener's failure is not the tool's.
    }
  }

  abort(reason: Error): void {
    // A timed-out attempt is aborted already and may then hold the backoff wait: aborting it
    // again (its owner stopping) still clears that wait and lets its waiter go.
    this.clearTimer();
    if (this.reason === undefined) {
      this.reason = reason;
      this.controller?.abort(reason);
    }
    const stop = this.stopWaiter;
    this.stopWaiter = undefined;
    stop?.(reason);
  }

  /** Who is let go when the attempt aborts (its timeout fires, or its owner stops it). */
  onAbort(stop: (reason: Error) => void): void {
    if (this.reason !== undefined) stop(this.reason);
    else this.stopWaiter = stop;
  }

  /** Arms the attempt's single timer (a later one replaces it); returns its handle. */
  setTimer(fn: () => void, ms: number): TimerHandle {
    this.clearTimer();
    const handle = this.owner.clock.setTimeout(() => {
      if (this.timer === handle) this.timer = undefined;
      fn();
    }, ms);
    this.timer = handle;
    return handle;
  }

  /**
   * Clears the timer, or with `only`, clears it only if it is still that one: a timed-out call
   * that settles late must not cancel the backoff wait that has replaced its timeout.
   */
  clearTimer(only?: TimerHandle): void {
    if (this.timer === undefined || (only !== undefined && this.timer !== only)) return;
    this.owner.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The backoff wait after this (failed) attempt, on the owner's clock; rejects if its owner aborts it meanwhile. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.stopWaiter = reject;
      this.setTimer(resolve, ms);
    });
  }
}

// Whatever an attempt throws becomes a StepError: the engine's own errors keep their code; a
// handler's error keeps its own string code (`RATE_LIMITED`, `ENOENT`: retry policies may name
// it); anything else is TOOL_ERROR. The message is one line of what went wrong.

/**
 * `keepStack` (an owner run with `debug`): a handler's Error keeps its stack, with the handler's
 * own file and line. Off otherwise: formatting a stack costs more than the rest of a failure.
 */
export function toStepError(thrown: unknown, keepStack = false): StepError {
  if (thrown instanceof CallFailure) return thrown.failure;
  if (thrown instanceof ToolchainError) return { code: thrown.code, message: thrown.message };
  const code = (thrown as { code?: unknown } | null)?.code;
  const message = thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : `threw ${String(thrown)}`;
  const error: StepError = { code: typeof code === 'string' && code !== '' ? failureCode(code) : 'TOOL_ERROR', message };
  return keepStack && thrown instanceof Error && typeof thrown.stack === 'string' ? { ...error, stack: thrown.stack } : error;
}

/** A failure already classified (a sub-chain's), thrown by a callee so that it is reported as it is. */
export class CallFailure extends Error {
  readonly failure: StepError;

  constructor(failure: StepError) {
    super(failure.message);
    this.name = 'CallFailure';
    this.failure = failure;
  }
}
