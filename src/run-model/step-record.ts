import type { StepError } from '../common/errors.js';

// A step's status and its result as a run store keeps it: the shared vocabulary of the executor
// that makes records, the stores that keep them and everyone who reads them back. Only types: the
// states and transitions that produce a record are the executor's (executor/step-state.ts).

export type StepStatus = 'pending' | 'validating' | 'running' | 'retrying' | 'waiting' | 'succeeded' | 'failed' | 'skipped';

export type FinalStatus = 'succeeded' | 'failed' | 'skipped';

/** Which fallback supplied a step's output: its tool with other arguments, another tool, or a fixed value. */
export type FallbackKind = 'input' | 'tool' | 'output';

/** The unit of checkpointing: a step's result, as a run store keeps it. */
export interface StepRecord {
  readonly step: string;
  readonly index: number;
  readonly status: FinalStatus;
  /** Tool calls made (for `for_each`, the most any one element needed; 0 when skipped). */
  readonly attempts: number;
  /** Present when succeeded, and when failed with `on_error: continue` (`{ error: { code, message } }`). */
  readonly output?: unknown;
  readonly error?: StepError;
  readonly started_at: number;
  readonly duration_ms: number;
  /** Set when the output came from a fallback. */
  readonly fallback?: FallbackKind;
  /** Why a skipped step was skipped: its own `when`, or a skipped step it reads or depends on. */
  readonly reason?: SkipReason;
}

export type SkipReason = 'when' | 'dependency';
