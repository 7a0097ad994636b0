import type { ToolchainError } from '../common/errors.js';
import type { RunResult } from './result.js';
import type { StepRecord } from './step-record.js';

// What a run is lent by whoever keeps it (a run store's entry, the durable runs): where its step
// results go the moment they are final, and a way to stop it. The executor calls these; the
// stores implement them.

export interface RunControl {
  /** Called once as the run starts, with the run itself: `halt` stops it (a cancellation, a store that cannot be written). */
  bind(run: Stoppable): void;
}

export interface Stoppable {
  /** Stops the run, its steps at work failing with ABORTED and the run with `reason`'s code and message. */
  halt(reason: ToolchainError): void;
}

/**
 * Receives step results. `key` is the step's name, `name[i]` for an element of a for_each, and
 * `parent›name` for a step of a sub-chain.
 */
export interface StepRecorder {
  record(key: string, record: StepRecord): void;
  /**
   * When present, results are written behind the run and a step must not read one before it is
   * written: `then` is called once every result recorded until now is (`failed`: it never will be,
   * and the run is being stopped). Absent: what is recorded counts as written at once.
   */
  readonly whenRecorded?: (then: (failed: boolean) => void) => void;
  /** The run's end, told before the run's promise resolves (at: the clock's time). */
  finished?(result: RunResult, at: number): void;
}
