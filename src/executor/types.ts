import type { Callee, RunWaits } from '../call/index.js';
import type { Clock } from '../common/clock.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { ApproveCallback } from '../registry/types.js';
import type { AgentRunner } from './agent-step.js';
import type { Distributor } from './element-call.js';
import type { Binder } from './call-sites.js';
import type { InputResult } from './run-inputs.js';
import type { Slots } from './slots.js';
import type { EventListener, ForEachProgress, LogEntry, ParentRef } from '../run-model/events.js';
import type { RunControl, StepRecorder } from '../run-model/recording.js';
import type { StepRecord } from '../run-model/step-record.js';

/**
 * What a caller passes to one run: the public options of `Engine.run`, `submit` and `resume`.
 * Nothing here lets a caller reach into the engine's bookkeeping; that is ExecutionOptions.
 */
export interface RunOptions {
  /** Cancels the whole run: running steps are aborted through their signals, the run fails with ABORTED. */
  readonly signal?: AbortSignal;
  /** Receives every event of the run, and of its sub-chains' runs, in order. */
  readonly onEvent?: EventListener;
  /** Asked before every call of a dangerous tool; anything but `true` refuses it (APPROVAL_DENIED). */
  readonly approve?: ApproveCallback;
  /** Max steps of this run at once; the effective limit is the least of this, the chain's and the engine's. */
  readonly concurrency?: number;
  /** The run's id (default: a new one). */
  readonly runId?: string;
  /**
   * Steps whose callee is replaced (chain tests, `run --mock`): a mocked step never calls its
   * tool. Public on purpose: a dry run with stand-ins is something a caller asks for, and what the
   * steps then return is the caller's own business; nothing recorded earlier is touched.
   */
  readonly mocks?: StepMocks;
  /** Handlers' errors keep their stacks (`error.stack` in the result; `--debug`). */
  readonly debug?: boolean;
  /** A for_each step's elements done so far, as they finish: for progress displays, not a run event. */
  readonly onProgress?: (progress: ForEachProgress) => void;
}

/**
 * What the executor is given for one run: the caller's options and what the engine fills in
 * (where results are recorded, what was recorded before, how to stop the run). Only the engine's
 * own code builds one (runs/durable-runs.ts); no public entry takes it.
 */
export interface ExecutionOptions extends RunOptions {
  /** When the run began (default: now), for a caller that has just read the clock. */
  readonly startedAt?: number;
  /** Where each step result goes the moment it is final (what a run store keeps). */
  readonly recorder?: StepRecorder;
  /**
   * Step results recorded earlier, by step key, in the order they were first recorded: recorded
   * successes are not run again. The others matter to a run whose steps had ended before (its
   * failure handling was under way): it is rebuilt from all of them.
   */
  readonly restored?: ReadonlyMap<string, StepRecord>;
  /**
   * Given, when the run starts, a function that stops it with an error of the engine's choosing
   * (a cancellation, a run store that cannot be written): what a signal does, without an
   * AbortController per run.
   */
  readonly control?: RunControl;
  /** On a queue worker: where a `distribute: true` for_each of the run (not of a sub-chain) sends its elements. */
  readonly distributor?: Distributor;
  /** Where the run's waits are kept (a run store); without it, waiting steps and approval requests cannot wait and fail. */
  readonly waits?: RunWaits;
}

/** What stands in for some steps' callees; `real` is what the step would call (undefined for sub-chain and agent steps). */
export interface StepMocks {
  callee(step: string, real: Callee | undefined): Callee | undefined;
  /** The mocks for the run of a sub-chain started by step `step`. */
  child(step: string): StepMocks | undefined;
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
  /** Elements one for_each may have (FOR_EACH_TOO_LARGE past it); undefined = unlimited. */
  readonly maxForEachElements?: number;
}

/** Where a run sits: under which parent step, and the prefix its step keys get. */
export interface RunScope {
  /** The step that started it, for a sub-chain's run (and the runs of its handlers). */
  readonly parent: ParentRef | undefined;
  readonly keyPrefix: string;
  readonly rootRunId: string;
  /** Levels of sub-chains above this run (a caller's run is 0). */
  readonly depth: number;
}

/** Something a stopping run can cancel: an attempt, or a for_each step's group of attempts. */
export interface Abortable {
  abort(reason: Error): void;
}
