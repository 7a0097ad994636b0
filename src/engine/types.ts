// The Engine interface: what createEngine (engine.ts) gives its callers — runs, events,
// approvals, triggers, the recorded runs, chains, tools and plugins. Kept apart from the wiring so
// that a reader of the API, and the modules that only take an engine (serve/), need not read it.

import type { Callee } from '../call/index.js';
import type { ChainPlan } from '../compiler/index.js';
import type { Diagnostic } from '../common/errors.js';
import type { RunResult } from '../run-model/result.js';
import type { CallTargets, ChainCallOptions } from '../llm/call-targets.js';
import type { RunStartOptions } from '../runs/start-options.js';
import type { RerunOptions } from '../runs/rerun.js';
import type { SentEvent } from '../runs/deliver-event.js';
import type { ApprovalView, Decision } from '../runs/approvals.js';
import type { RunDetail, RunSummary } from '../runs/stored-result.js';
import type { RunFilter, RunStore } from '../store/types.js';
import type { Observer } from '../observe/index.js';
import type { EngineTriggerControls } from './engine-triggers.js';
import type { Submission } from '../queue/submit.js';
import type { PluginStatus } from '../plugins/index.js';
import type { Tool, ToolDefinition, ToolSet } from '../registry/types.js';

export interface Engine extends CallTargets {
  /**
   * Runs a chain. Resolves with the result whether the run succeeded or failed; rejects only for
   * bad options. With `runId`: a finished run with that id is answered from the store,
   * a live one refused (RUN_IN_PROGRESS), one whose owner died resumed.
   */
  run(chain: string, input?: unknown, options?: RunStartOptions): Promise<RunResult>;
  /**
   * Starts a run and returns as soon as it is recorded (and, with `queue`, enqueued): its id, and
   * its result when wanted. A name that is no chain, or a queue that cannot be reached, throws.
   */
  submit(chain: string, input?: unknown, options?: RunStartOptions): Promise<Submission>;
  /** Continues a run cut short (crash, kill, cancel) or failed (redrive): recorded successes are not run again. */
  resume(runId: string, options?: RunStartOptions): Promise<RunResult>;
  /**
   * A new run of a run that ended, from step `from`: that step and every step downstream of it
   * run, every other step keeps its recorded output; without `from`, every step runs again. The
   * input is the run's with `input`'s keys replaced. The new run records its origin (`rerun_of`,
   * `rerun_from`). Refused (a failed result) with CHAIN_CHANGED, STEP_NOT_FOUND,
   * RERUN_INPUT_READ or RUN_NOT_FINISHED; `runId` names the new run.
   */
  rerun(runId: string, options?: RerunOptions): Promise<RunResult>;
  /** Asks a run to stop, wherever it runs (through the store); false when no such run is running. */
  cancel(runId: string): Promise<boolean>;
  /** True when runs go to a queue's workers (`createEngine({ queue })`) instead of executing here. */
  readonly queued: boolean;
  /** Prometheus text of the engine's metrics; needs `observe`. */
  metrics(): Promise<string>;
  /** What observes every run, when the engine was made with `observe`. */
  readonly observer: Observer | undefined;
  /**
   * Sends an event: kept in the run store (idempotent by `id`), and delivered to every waiting
   * `wait_for` whose match it meets; their runs are woken by whoever wakes runs (this engine, with
   * `timers` or a caller awaiting them; serve, worker, watch).
   */
  emit(name: string, payload?: unknown, options?: { readonly id?: string }): Promise<SentEvent>;
  /** Approval requests: `approval` steps and dangerous calls whose approver answered 'wait'. */
  readonly approvals: {
    /** The requests waiting for a decision, oldest first. */
    list(): Promise<ApprovalView[]>;
    /** Decides one (once: a second decision is APPROVAL_REFUSED); its run goes on when woken. */
    decide(id: string, decision: Decision): Promise<ApprovalView>;
  };
  /** The loaded chains' triggers (`triggers:` in a chain file). */
  readonly triggers: EngineTriggerControls;
  /** The recorded runs. */
  readonly runs: {
    list(filter?: RunFilter): Promise<RunSummary[]>;
    get(runId: string): Promise<RunDetail | undefined>;
    /** Waits by run, kind and openness (the store's records), and when a waiting run is looked at again. */
    waits: RunStore['waits']['listWaits'];
    wakeAt: RunStore['waits']['wakeAt'];
  };
  /** Adds a tool from code; chains that use it can run at once. */
  registerTool<A extends object = Record<string, unknown>>(def: ToolDefinition<A>): Tool;
  /** Compiles a chain from YAML text and makes it runnable; throws a ToolchainError with its diagnostics. */
  addChain(text: string, file?: string): ChainPlan;
  /** Every runnable chain. */
  chains(): ChainPlan[];
  /** A chain as something a model's call can reach: each call is a run of it. */
  chainCallee(chain: ChainPlan, options?: ChainCallOptions): Callee;
  chain(name: string): ChainPlan | undefined;
  /** The current tools (an immutable snapshot). */
  tools(): ToolSet;
  /** Problems found loading the chains folder. */
  diagnostics(): readonly Diagnostic[];
  /** Every plugin folder and its state (empty without `pluginsDir`). */
  plugins(): PluginStatus[];
  /** Re-reads the chains folder. */
  reloadChains(): Promise<void>;
  /** Stops watching; runs in flight finish on their own. */
  close(): Promise<void>;
}
