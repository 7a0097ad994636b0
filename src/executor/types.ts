import type { ChainPlan } from '../compiler/plan.js';
import type { ApproveCallback, ToolSet } from '../registry/types.js';
import type { SchemaCompiler } from '../registry/schema-compiler.js';
import type { Clock } from '../common/clock.js';
import type { EventListener, ParentRef, RunError } from './events.js';
import type { Slots } from './slots.js';
import type { StepError } from './step-error.js';
import type { StepStatus } from './step-state.js';

/** What a caller passes to one run (SPEC §6). */
export interface RunOptions {
  /** Cancels the whole run: running steps are aborted through their signals, the run fails with ABORTED. */
  readonly signal?: AbortSignal;
  /** Receives every event of the run, and of its sub-chains' runs, in order. */
  readonly onEvent?: EventListener;
  /** Asked before every call of a dangerous tool; anything but `true` refuses it (APPROVAL_DENIED). */
  readonly approve?: ApproveCallback;
  /** Max steps of this run at once; the effective limit is the least of this, the chain's and the engine's. */
  readonly concurrency?: number;
}

/** One step in a run's result (SPEC §5). Step outputs are in the events and, through `outputs`, in the result. */
export interface StepSummary {
  readonly status: StepStatus;
  readonly attempts: number;
  readonly duration_ms: number;
  readonly error?: StepError;
}

export interface RunResult {
  readonly run_id: string;
  readonly chain: string;
  readonly status: 'succeeded' | 'failed';
  /** The chain's `outputs`, or the output of the last step in the file that ran; null when the run failed. */
  readonly outputs: unknown;
  readonly error?: RunError;
  readonly steps: Readonly<Record<string, StepSummary>>;
  readonly duration_ms: number;
}

export interface LogEntry {
  readonly timestamp: number;
  readonly run_id: string;
  readonly step: string;
  readonly attempt: number;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** What the engine lends the executor: time, randomness, the global limit, and the chains for `chain:` steps. */
export interface ExecutorHost {
  readonly clock: Clock;
  /** Uniform in [0, 1): backoff jitter. */
  readonly random: () => number;
  /** The engine-wide concurrency limit shared by every run; undefined = unlimited. */
  readonly slots: Slots | undefined;
  newRunId(): string;
  /** The current plan of a chain, for `chain:` steps. */
  chain(name: string): ChainPlan | undefined;
  /** Where `ctx.log()` lines go. */
  log(entry: LogEntry): void;
  /** Compiles chains' input schemas: the engine's (its registry's), so no Ajv state is shared. */
  readonly schemas?: SchemaCompiler;
}

/** Internal: what a sub-chain's run inherits from its parent. */
export interface ChildRunSettings {
  readonly parent: ParentRef;
  readonly tools: ToolSet;
}
