import type { ToolContext } from '../registry/types.js';
import type { Clock, TimerHandle } from '../common/clock.js';

// The `ctx` a tool receives (SPEC §3.1), one per attempt. Its AbortSignal is made only when
// somebody reads `ctx.signal`: building an AbortController's signal costs microseconds on Node 20,
// more than the rest of a step. Aborting an attempt whose signal nobody read just records the
// reason, so a later read returns an already-aborted signal. The same object owns the attempt's
// one timer (its timeout or the backoff wait before it), which aborting clears.

const NO_ENV: Readonly<Record<string, string | undefined>> = Object.freeze({});

/** What an attempt needs from its run: identity, and where log lines go. */
export interface AttemptOwner {
  readonly id: string;
  readonly clock: Clock;
  log(step: string, attempt: number, message: string, fields: Record<string, unknown> | undefined): void;
}

/** Something a stopping run can cancel: an attempt, or a for_each step's group of attempts. */
export interface Abortable {
  abort(reason: Error): void;
}

export class AttemptContext implements ToolContext, Abortable {
  readonly run_id: string;
  readonly step: string;
  readonly attempt: number;
  /** The tool's own view of the environment replaces this (the registry restricts it per tool). */
  readonly env = NO_ENV;
  private readonly owner: AttemptOwner;
  private controller: AbortController | undefined = undefined;
  private reason: Error | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;

  constructor(owner: AttemptOwner, step: string, attempt: number) {
    this.owner = owner;
    this.run_id = owner.id;
    this.step = step;
    this.attempt = attempt;
  }

  get signal(): AbortSignal {
    return this.lazySignal();
  }

  lazySignal(): AbortSignal {
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
    this.owner.log(this.step, this.attempt, message, fields);
  }

  abort(reason: Error): void {
    // Cleared even when already aborted: a timed-out attempt's context may hold the backoff wait.
    this.clearTimer();
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  /** Arms the attempt's single timer (a timeout, or the backoff wait after the attempt); returns its handle. */
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
   * settles after the backoff wait has replaced its timer, and must not cancel the wait.
   */
  clearTimer(only?: TimerHandle): void {
    if (this.timer === undefined || (only !== undefined && this.timer !== only)) return;
    this.owner.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
