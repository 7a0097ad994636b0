// The options of starting or resuming a run: what a caller of the engine may pass
// (RunStartOptions, public), and what only the engine's own parts may (the queue worker taking a
// run over, the waker continuing a waiting one). The engine's parts attach theirs under a symbol
// this module keeps to itself, so no public caller can forge them: `engine.resume(id, { claimLive:
// true })` is a resume like any other, and the executor's bookkeeping (recorder, restored steps,
// control, waits) is never taken from any caller at all — durable-runs.ts builds it per run.

import type { Distributor } from '../executor/element-call.js';
import type { RunOptions } from '../executor/types.js';

/** What a caller passes to `Engine.run`, `submit` and `resume`. */
export interface RunStartOptions extends RunOptions {
  /** With the id of a run whose owner died and whose chain changed since: resume it anyway. */
  readonly allowChanged?: boolean;
  /** Resolve as soon as the run parks on a wait (status `waiting`), rather than when it ends. */
  readonly untilWaiting?: boolean;
}

/** What the engine's own parts add to a start or a resume. */
export interface StartPlumbing {
  /**
   * The caller holds the queue's lock on this run: take it over even from an owner that looks
   * alive. Its lock ran out, so it is gone or stuck; the new epoch fences its writes.
   */
  readonly claimLive?: boolean;
  /** The queue whose worker takes the run over, recorded on the run (none: this process executes it on its own). */
  readonly queue?: string;
  /** A waiting run is woken (its time came, or a wait of it was resolved): continue it rather than refuse RUN_WAITING. */
  readonly wake?: boolean;
  /** On a queue worker: where a `distribute: true` for_each of the run sends its elements. */
  readonly distributor?: Distributor;
}

const PLUMBING: unique symbol = Symbol('toolchain.start-plumbing');

/** A start or resume from inside the engine: the caller's options and the plumbing. */
export interface InternalStartOptions extends RunStartOptions {
  readonly [PLUMBING]?: StartPlumbing;
}

const NONE: StartPlumbing = Object.freeze({});

/** `options` with `plumbing` attached (a copy; spreading the result keeps it, as the engine's defaults do). */
export function withPlumbing<T extends RunStartOptions>(options: T, plumbing: StartPlumbing): T & InternalStartOptions {
  return { ...options, [PLUMBING]: plumbing };
}

/** The plumbing of a start: none for options a public caller made, whatever keys they carry. */
export function plumbingOf(options: InternalStartOptions): StartPlumbing {
  return options[PLUMBING] ?? NONE;
}
