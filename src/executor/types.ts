import type { Clock } from '../common/clock.js';
import type { StepError } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { ApproveCallback } from '../registry/types.js';
import type { AgentRunner } from './agent-step.js';
import type { Binder } from './call-sites.js';
import type { EventListener, RunError } from './events.js';
import type { InputResult } from './run-inputs.js';
import type { Slots } from './slots.js';
import type { FinalStatus, StepRecord } from './step-state.js';

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
  /** `pending` for a step that never started (the run stopped first). */
  readonly status: FinalStatus | 'pending';
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

/** A run, as the recorder of its step results sees it. */
export interface RecordingRun {
  readonly runId: string;
  readonly plan: ChainPlan;
}

/**
 * What the engine lends the executor: time, randomness, the global limit, the chains for `chain:`
 * steps, the language-model runner for `agent:` steps, and its caches.
 */
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
  /** Binds plans to tools (a cache per engine). */
  readonly binder: Binder;
  /** A run's input checked against its chain's `inputs` (validators compiled once per plan, per engine). */
  checkInput(plan: ChainPlan, input: unknown): InputResult;
  /** Runs `agent:` steps; without it they fail. */
  readonly agents?: AgentRunner;
  /** Receives each step result the moment it is final: what a run store persists (SPEC §7.1). */
  readonly record?: (run: RecordingRun, record: StepRecord) => void;
}
