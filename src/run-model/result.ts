import type { StepError } from '../common/errors.js';
import type { FinalStatus } from './step-record.js';

// What a run returns once its execution ends, as the executor makes it and the engine, the run
// store, the queue, the server and the CLI hand it on: its status, outputs or error, and one
// summary per step. Building one is the executor's (executor/run-result.ts).

/** The parts of a run that come after its steps: `on_failure` steps, compensations, `finally` steps. */
export type HandlerPhase = 'on_failure' | 'compensate' | 'finally';

/** Why a run failed; `step` names the step whose failure ended it. */
export interface RunError extends StepError {
  readonly step?: string;
}

/** One step in a run's result. Step outputs are in the events and, through `outputs`, in the result. */
export interface StepSummary {
  /** `pending` for a step that never started (the run stopped first); `waiting` for one whose wait is not over. */
  readonly status: FinalStatus | 'pending' | 'waiting';
  readonly attempts: number;
  readonly duration_ms: number;
  readonly error?: StepError;
  /** Set on a step of failure handling: an `on_failure` or `finally` step, or a compensation (`STEP~compensate`). */
  readonly phase?: HandlerPhase;
}

/**
 * `cancelled`: stopped by its caller (a signal, `cancel`); `failed`: anything else that kept it
 * from succeeding; `compensation_failed`: it failed, and a compensation of one of its steps failed
 * for good too (what that step did may not be undone).
 */
export type RunEndStatus = 'succeeded' | 'failed' | 'compensation_failed' | 'cancelled';

export interface RunResult {
  readonly run_id: string;
  readonly chain: string;
  /** `waiting`: the run has nothing left but waits and is parked (error RUN_WAITING says on what); it goes on when woken. */
  readonly status: RunEndStatus | 'waiting';
  /** The chain's `outputs`, or the output of the last step in the file that ran; null when the run failed. */
  readonly outputs: unknown;
  readonly error?: RunError;
  readonly steps: Readonly<Record<string, StepSummary>>;
  readonly duration_ms: number;
}

/** A run stopped by its caller (not by a failing step) ended as `cancelled`. */
export function isCancellation(error: { readonly code: string; readonly step?: string } | undefined): boolean {
  return error !== undefined && error.code === 'ABORTED' && error.step === undefined;
}
