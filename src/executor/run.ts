import { performCall, type CallContext, type CallOwner, type CallSite, type CallWatcher, type RetryReport, type RunWaits } from '../call/index.js';
import type { Clock } from '../common/clock.js';
import { ToolchainError, type ErrorCode, type StepError } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { HandlerPhase, RunError, RunResult } from '../run-model/result.js';
import type { ApproveCallback, ToolProgress, ToolSet } from '../registry/types.js';
import { handlerBinding, type BoundPlan } from './call-sites.js';
import type { EventListener, ParentRef, RunEvent } from '../run-model/events.js';
import type { Stoppable } from '../run-model/recording.js';
import type { FallbackKind, SkipReason, StepRecord } from '../run-model/step-record.js';
import { startForEach } from './for-each.js';
import { startRepeat } from './repeat-step.js';
import type { runChain } from './run-chain.js';
import { newContext, NO_ARGS, unresolvable } from './run-context.js';
import { runResult } from './run-result.js';
import { ReadyQueue, RunSlots } from './scheduler.js';
import { childSite, mockedSite } from './step-callees.js';
import { attemptInput, EMIT, effectsOf, FREE_SLOT, isActive, isFinal, PENDING, RECORD, RELEASE_DEPENDENTS, skipReason, startInput, stepEvent, STOP_RUN, succeedInput, transition, WRITE_OUTPUT, type StepInput, type StepState } from './step-state.js';
import type { Abortable, ExecutorHost, ExecutionOptions, RunScope } from './types.js';

// One run of one plan: the step states, the run context, and the scheduler that starts a step the
// moment its last dependency finishes (a counter per step reaches zero), within the chain's and
// the engine's limits. Every change of a step goes through `apply`: the pure transition of
// step-state.ts says what the new state is and which effects follow, and this class performs
// exactly those. Below the class: what a started step does (startStep), a call's progress as an
// event (progressEvent), and what can stop a run from outside its steps (armStops).

export class Run implements CallOwner, CallWatcher, Stoppable {
  readonly runId: string;
  readonly plan: ChainPlan;
  readonly host: ExecutorHost;
  readonly clock: Clock;
  readonly random: () => number;
  readonly approve: ApproveCallback | undefined;
  readonly waits: RunWaits | undefined;
  readonly onEvent: EventListener | undefined;
  readonly observed: boolean;
  readonly debug: boolean;
  readonly parent: ParentRef | undefined;
  readonly settlesOnAbort = false;
  /** The run context: inputs, then each finished step's output by name. Written only by WRITE_OUTPUT. */
  readonly context: Record<string, unknown>;
  bound!: BoundPlan;
  readonly options: ExecutionOptions;
  private readonly states: StepState[];
  /** What each step at work can be cancelled through (its attempt, or its for_each group). */
  private readonly controls: (Abortable | undefined)[];
  private readonly queue: ReadyQueue;
  private ownSites: (CallSite | undefined)[] | undefined; // made for the first sub-chain, agent or mocked step
  /** One clock reading per scheduling turn, for the steps it ends and starts (they do so at one moment); a later end replaces it, its owner clears it. */
  private turnAt: number | undefined;
  private pumping = false;
  /** Steps parked on a wait: the run parks instead of finishing when it goes quiet with any. */
  private parked = 0;
  private stage: 'running' | 'stopping' | 'done' = 'running';
  private error: RunError | undefined;
  private readonly started: number;
  private disarm: (() => void) | undefined;
  private resolve!: (result: RunResult) => void;
  /** Prefix of this run's step keys: '' for a run, `step›` for a sub-chain's run. */
  readonly keyPrefix: string;
  readonly rootRunId: string; // the id its results are recorded under: its own, or the top run's
  readonly depth: number; // levels of sub-chains above this run
  /** Set on the run of a handler list or a compensation (its plan's phase): its step events say so. */
  readonly phase: HandlerPhase | undefined;
  /**
   * Which of `run:started` / `run:finished` this run says itself: both for a plain run; only the
   * start for a run whose chain has failure handling (run-chain.ts says how it ended, after the
   * handlers); neither for a handler's run, which is a part of its run, not a run of its own.
   */
  private readonly bounds: 'both' | 'start' | 'none';
  /** Its steps started (it was not refused first: a bad input, a missing tool, cancelled before it began). */
  began = false;
  /** Steps in the order they ended in this execution: kept only for a chain with compensations (their order). */
  readonly completions: number[] | undefined;
  /** How a sub-chain's run is started: run-chain.ts's runChain, handed in by it (importing it here would make an import cycle). */
  private readonly runChain: typeof runChain;

  constructor(host: ExecutorHost, plan: ChainPlan, options: ExecutionOptions, scope: RunScope | undefined, chains: typeof runChain) {
    this.runId = options.runId ?? host.newRunId();
    this.keyPrefix = scope?.keyPrefix ?? '';
    this.rootRunId = scope?.rootRunId ?? this.runId;
    this.parent = scope?.parent;
    this.depth = scope?.depth ?? 0;
    this.phase = plan.phase;
    this.bounds = plan.phase !== undefined ? 'none' : plan.handlers !== undefined ? 'start' : 'both';
    this.completions = plan.handlers?.compensations.some((c) => c !== undefined) === true ? [] : undefined;
    this.plan = plan;
    this.host = host;
    this.clock = host.clock;
    this.random = host.random;
    this.options = options;
    this.approve = options.approve;
    this.waits = options.waits;
    this.onEvent = options.onEvent;
    this.observed = options.onEvent !== undefined;
    this.debug = options.debug === true;
    const arrays = host.binder.arrays(plan);
    this.states = arrays.states.slice();
    this.controls = new Array<Abortable | undefined>(plan.steps.length);
    this.queue = new ReadyQueue(plan, arrays.waitCounts, Math.min(plan.concurrency ?? Infinity, options.concurrency ?? Infinity), host.slots && new RunSlots(host.slots, () => this.pump()), () => this.pump());
    this.context = newContext(plan.steps.length);
    this.started = options.startedAt ?? host.clock.now();
    this.runChain = chains;
  }

  /**
   * Binds the tools, restores recorded steps and starts the roots; resolves when the run has
   * finished. `ended`: the run's steps had ended in an earlier execution (its failure handling
   * was under way): every recorded result is restored and the run finishes as it did, running nothing.
   */
  start(tools: ToolSet, input: unknown, ended?: { readonly error: RunError | undefined }): Promise<RunResult> {
    const promise = new Promise<RunResult>((resolve) => (this.resolve = resolve));
    if (this.onEvent && this.bounds !== 'none') this.emit({ type: 'run:started', run_id: this.runId, chain: this.plan.name, timestamp: this.started, parent: this.parent, input });
    // A handler's input is its run's context, checked when that run started.
    const checked = this.phase !== undefined ? { ok: true as const, input: input as Record<string, unknown> } : this.host.checkInput(this.plan, input);
    if (!checked.ok) return this.endEarly('INPUT_INVALID', checked.message), promise;
    const bound = this.host.binder.bind(this.plan, tools);
    if (bound instanceof ToolchainError) return this.endEarly(bound.code, bound.message), promise;
    // A tool a handler needs is missing: said now, before a step runs, not once the run has failed.
    const unbound = this.plan.handlers !== undefined ? handlerBinding(this.host.binder, this.plan, tools) : undefined;
    if (unbound !== undefined) return this.endEarly(unbound.code, unbound.message), promise;
    this.bound = bound;
    const signal = this.options.signal;
    if (signal?.aborted) return this.endEarly('ABORTED', 'the run was cancelled before it started'), promise;
    Object.assign(this.context, checked.input);
    this.began = true;
    if (ended !== undefined) return this.replay(ended.error), promise;
    this.disarm = armStops(this.plan, this.clock, signal, this);
    this.options.control?.bind(this);
    // A recorded success is not executed again; its output feeds the steps after it.
    // Nothing starts until every record is back (a restored step must not be started first).
    if (this.options.restored) {
      this.pumping = true;
      for (const i of this.plan.order) {
        const record = this.restoredRecord(this.plan.steps[i]!.name);
        if (record) this.apply(i, { type: 'restore', record });
      }
      this.pumping = false;
    }
    this.turnAt = this.started; // the first turn starts the roots at the run's start
    this.pump();
    this.turnAt = undefined;
    return promise;
  }

  /** A run whose steps had ended: every result back as recorded (failures and skips too), then the end it had. */
  private replay(error: RunError | undefined): void {
    this.pumping = true;
    for (const i of this.plan.order) {
      const record = this.options.restored?.get(this.keyPrefix + this.plan.steps[i]!.name);
      if (record) this.apply(i, { type: 'restore', record });
    }
    this.pumping = false;
    this.error = error;
    this.stage = 'stopping';
    this.finish();
  }

  /** The one place a step changes: transition, then exactly the effects it names. */
  apply(i: number, input: StepInput): void {
    const step = this.plan.steps[i]!;
    const prev = this.states[i]!;
    const next = transition(prev, input, step);
    if (next === undefined) return;
    this.states[i] = next;
    const effects = effectsOf(prev, next, input, step);
    if (effects & EMIT && this.onEvent) this.emit(stepEvent(this, step, input, next));
    if (effects & RECORD && isFinal(next)) {
      this.options.recorder?.record(this.keyPrefix + step.name, next.record);
      this.completions?.push(i);
    }
    if (effects & WRITE_OUTPUT && isFinal(next)) this.context[step.name] = next.record.output;
    if (effects & FREE_SLOT) {
      this.controls[i] = undefined;
      this.queue.finished(i);
    }
    if (effects & RELEASE_DEPENDENTS) this.queue.release(i, effects & RECORD ? this.options.recorder?.whenRecorded : undefined);
    if (effects & STOP_RUN && isFinal(next)) this.stop({ ...next.record.error!, step: step.name }, 'ABORTED', `step '${step.name}' failed`);
    else if (effects & (FREE_SLOT | RELEASE_DEPENDENTS)) this.pump();
  }

  /** Starts every ready step the limits allow. Re-entrant calls (a step ending at once) fall through to the running loop. */
  private pump(): void {
    if (this.pumping || this.stage !== 'running') return;
    this.pumping = true;
    const ownTurn = this.turnAt === undefined;
    if (ownTurn) this.turnAt = this.clock.now();
    const queue = this.queue;
    for (let i = queue.peek(); i !== undefined && this.stage === 'running'; i = queue.peek()) {
      if (this.states[i] !== PENDING) {
        queue.drop(); // restored, or already settled
        continue;
      }
      const skip = this.skipReason(i);
      if (skip === 'broken') continue;
      if (skip !== undefined) {
        queue.drop();
        this.apply(i, { type: 'skip', at: this.turnAt!, reason: skip });
        continue;
      }
      if (!queue.admit(i)) break;
      this.apply(i, startInput(this.turnAt!));
      startStep(this, i);
    }
    const idle = queue.settle(this.stage === 'running');
    this.pumping = false;
    if (this.stage === 'running' && idle) this.finish();
    if (ownTurn) this.turnAt = undefined;
  }

  /** Whether a ready step is skipped (step-state.ts, skipReason); a `when` that cannot be evaluated fails the step. */
  private skipReason(i: number): SkipReason | 'broken' | undefined {
    try {
      return skipReason(this.plan.steps[i]!, this.context, this.states);
    } catch (error) {
      // Started (so that it can fail) outside the limits: it holds no slot.
      this.queue.startOutsideLimits();
      this.apply(i, { type: 'start', at: this.clock.now() });
      this.apply(i, { type: 'fail', at: this.clock.now(), error: { code: 'VALIDATION_FAILED', message: `its 'when' could not be evaluated: ${(error as Error).message}` }, attempts: 0 });
      return 'broken';
    }
  }

  // ---------------------------------------------------------------------------------------------
  // A step's work reports here (the run is the CallWatcher of its plain steps, keyed by step index).

  /** The call site of step `i`: bound with the tools, or (sub-chain, agent) made for this run. */
  site(i: number): CallSite {
    if (this.options.mocks !== undefined) {
      const mocked = ((this.ownSites ??= [])[i] ??= mockedSite(this, this.plan.steps[i]!, this.options.mocks));
      if (mocked !== undefined) return mocked;
    }
    return this.bound.sites[i] ?? ((this.ownSites ??= [])[i] ??= childSite(this, this.plan.steps[i]!));
  }

  /** True while step `i` is at work in a run that has not stopped: a late result is dropped. */
  live(i: number): boolean {
    return this.stage === 'running' && isActive(this.states[i]!);
  }

  track(i: number, control: Abortable): void {
    this.controls[i] = control;
  }

  attempt(i: number, ctx: CallContext): void {
    this.controls[i] = ctx;
    this.apply(i, attemptInput(ctx.attempt));
  }

  retrying(i: number, report: RetryReport, item?: number): void {
    if (this.live(i)) this.apply(i, { type: 'retry', report, item });
  }

  succeeded(i: number, output: unknown, attempts: number, fallback: FallbackKind | undefined): void {
    if (!this.live(i)) return;
    const outer = this.turnAt;
    const at = (this.turnAt = this.clock.now());
    this.apply(i, succeedInput(at, output, attempts, fallback));
    this.turnAt = outer === undefined ? undefined : at;
  }

  failed(i: number, error: StepError, attempts: number): void {
    if (!this.live(i)) return;
    // A wait that is not over parks the step (wait-step.ts): not a failure, and nothing is recorded.
    if (error.code === 'RUN_WAITING') {
      this.parked++;
      return this.apply(i, { type: 'park', at: this.clock.now(), wait: error.message });
    }
    this.apply(i, { type: 'fail', at: this.clock.now(), error, attempts });
  }

  idempotencyKey(label: string, item: number | undefined): string {
    return `${this.rootRunId}:${this.waitKey(label, item)}`;
  }

  waitKey(label: string, item: number | undefined): string {
    return `${this.keyPrefix}${label}${item === undefined ? '' : `[${item}]`}`;
  }

  /** A recorded success under this run's `name` (a step, or `name[i]`): what is not run again. */
  restoredRecord(name: string): StepRecord | undefined {
    const record = this.options.restored?.get(this.keyPrefix + name);
    return record?.status === 'succeeded' ? record : undefined;
  }

  /** Records the result of a part of a step (a for_each element) under `name`, when something records. */
  recordPart(name: string, record: () => StepRecord): void {
    this.options.recorder?.record(this.keyPrefix + name, record());
  }

  /** A call's own report of how far it has got (ctx.progress): a step:progress event, when someone listens. */
  callProgress(label: string, attempt: number, item: number | undefined, report: ToolProgress): void {
    if (this.onEvent) progressEvent(this, label, attempt, item, report);
  }

  log(label: string, attempt: number, message: string, fields: Record<string, unknown> | undefined, item: number | undefined): void {
    this.host.log({ timestamp: this.clock.now(), run_id: this.runId, step: label, attempt, ...(item !== undefined ? { item } : {}), message, ...(fields !== undefined ? { fields } : {}) });
  }

  // ---------------------------------------------------------------------------------------------
  // The end

  /** RunControl's way in: a cancellation, or a run store that cannot be written. */
  halt(reason: ToolchainError): void {
    this.stop({ code: reason.code, message: reason.message }, 'ABORTED');
  }

  /**
   * Ends the run early: nothing new starts, every step at work is aborted through its signal and
   * fails with `abortCode`, and the run finishes at once. It does not wait for aborted tools to
   * return: a tool that ignores its signal cannot hold the run (its late result is dropped).
   */
  stop(error: RunError, abortCode: ErrorCode, why?: string): void {
    if (this.stage !== 'running') return;
    this.stage = 'stopping';
    this.error = error;
    const message = why ? `aborted because ${why}` : error.message;
    const reason = new ToolchainError(abortCode, message);
    const now = this.clock.now();
    for (let i = 0; i < this.states.length; i++) {
      if (!isActive(this.states[i]!)) continue;
      this.controls[i]?.abort(reason);
      this.apply(i, { type: 'abort', at: now, error: { code: abortCode, message } });
    }
    this.finish();
  }

  /** Where the run sits (for the runs of its handlers, which sit there too). */
  get scope(): RunScope {
    return { parent: this.parent, keyPrefix: this.keyPrefix, rootRunId: this.rootRunId, depth: this.depth };
  }

  /**
   * Runs a sub-chain's plan as a child of this run: same engine, same tools, same listener and
   * approver. With `key` (the calling step's key) its steps are recorded and restored under
   * `key›name`; without (a chain an agent's model called) they are neither. A sub-chain with
   * failure handling runs its handlers inside the child, under the same prefix.
   */
  child(plan: ChainPlan, input: unknown, signal: AbortSignal, step: string, key: string | undefined): Promise<RunResult> {
    const { onEvent, approve, options } = this;
    const recorded = key !== undefined ? { recorder: options.recorder, restored: options.restored, waits: options.waits } : {};
    const mocks = options.mocks?.child(step);
    const childOptions: ExecutionOptions = { signal, onEvent, approve, concurrency: options.concurrency, debug: this.debug, onProgress: options.onProgress, ...recorded, ...(mocks ? { mocks } : {}) };
    const scope: RunScope = { parent: { run_id: this.runId, step }, keyPrefix: `${this.keyPrefix}${key ?? step}›`, rootRunId: this.rootRunId, depth: this.depth + 1 };
    return this.runChain(this.host, plan, childOptions, scope, this.bound.tools, input);
  }

  private endEarly(code: ErrorCode, message: string): void {
    this.error = { code, message };
    this.stage = 'stopping';
    this.finish();
  }

  private finish(): void {
    if (this.stage === 'done') return;
    this.stage = 'done';
    this.queue.close();
    this.disarm?.();
    if (this.error === undefined && this.parked > 0) this.error = this.waiting();
    const at = this.turnAt ?? this.clock.now();
    const result = runResult(this.plan, this.runId, this.states, this.context, this.error, at - this.started);
    if (this.bounds === 'both') this.announce(result, at);
    this.resolve(result);
  }

  /** The run's end, told: `run:finished` (unless it is parked), and the recorder of a top-level run. */
  announce(result: RunResult, at: number): void {
    const { status, duration_ms, outputs, error } = result;
    // A parked run has not finished: whoever parks it in the store says run:waiting.
    if (this.onEvent && status !== 'waiting') this.emit({ type: 'run:finished', run_id: this.runId, chain: this.plan.name, timestamp: at, parent: this.parent, status, duration_ms, outputs, error });
    if (this.keyPrefix === '') this.options.recorder?.finished?.(result, at);
  }

  /** When this execution of the run began (its clock reading). */
  get startedAt(): number {
    return this.started;
  }

  /** The state of step `i`. */
  state(i: number): StepState {
    return this.states[i]!;
  }

  /** RUN_WAITING, naming the parked steps: every step left waits (the run is over for now, not finished). */
  private waiting(): RunError {
    const parked = this.plan.steps.filter((_, i) => this.states[i]!.status === 'waiting').map((s) => s.name);
    return { code: 'RUN_WAITING', message: `run ${this.runId} waits at ${parked.map((s) => `'${s}'`).join(', ')}`, step: parked[0] };
  }

  /** A listener's exception is its own problem: it must not break the run it listens to. */
  emit(event: RunEvent): void {
    try {
      this.onEvent!(event);
    } catch {
      // ignored on purpose
    }
  }
}

// What a started step does: resolve its arguments from the run context and make its call (the
// run receives the outcome as the step's CallWatcher), fan out over a for_each, or run rounds of
// a repeat. An input_map with a path in it resolves to a new object per call (a constant one is
// one frozen object): performCall may then validate it in place.

function startStep(run: Run, i: number): void {
  const step = run.plan.steps[i]!;
  if (step.forEach !== undefined) return startForEach(run, i, step);
  if (step.repeat !== undefined) return startRepeat(run, i, step);
  let args: Record<string, unknown>;
  try {
    args = step.input.get(run.context) as Record<string, unknown>;
  } catch (error) {
    return performCall({ owner: run, site: run.site(i), watcher: run, key: i, args: NO_ARGS, scope: run.context, item: undefined, unresolved: unresolvable(error) });
  }
  performCall({ owner: run, site: run.site(i), watcher: run, key: i, args, scope: run.context, item: undefined, fresh: !step.input.constant });
}

/** A call's progress report (ctx.progress) as a step:progress event of its step. */
function progressEvent(run: Run, label: string, attempt: number, item: number | undefined, report: ToolProgress): void {
  const step = run.plan.steps.find((s) => s.name === label);
  if (!step) return;
  const { progress, total, message } = report;
  run.emit({
    type: 'step:progress', run_id: run.runId, chain: run.plan.name, timestamp: run.clock.now(), parent: run.parent,
    step: step.name, index: step.index, item, call: undefined, phase: run.phase, attempt, progress, total, message,
  });
}

/**
 * What can stop a run from outside its steps: its chain's `timeout` (RUN_TIMEOUT) and its caller's
 * signal (ABORTED — or the code of the ToolchainError the signal was aborted with: a run store that
 * cannot be written stops the run with STORE_WRITE_FAILED). Returns what disarms both, for when
 * the run ends first (undefined when there is nothing to arm).
 */
function armStops(plan: ChainPlan, clock: Clock, signal: AbortSignal | undefined, run: { stop(error: RunError, code: ErrorCode): void }): (() => void) | undefined {
  // Most runs have neither. The closures below live in arm(): a function that makes closures
  // allocates the context they share on entry, before any early return.
  if (plan.timeoutMs === undefined && signal === undefined) return undefined;
  return arm(plan, clock, signal, run);
}

function arm(plan: ChainPlan, clock: Clock, signal: AbortSignal | undefined, run: { stop(error: RunError, code: ErrorCode): void }): () => void {
  const ms = plan.timeoutMs;
  const stop = (error: RunError, code: ErrorCode): void => run.stop(error, code);
  const deadline = ms === undefined ? undefined : clock.setTimeout(() => stop({ code: 'RUN_TIMEOUT', message: `the run of chain '${plan.name}' exceeded its timeout of ${ms} ms` }, 'RUN_TIMEOUT'), ms);
  const onAbort = (): void => {
    const reason: unknown = signal!.reason;
    if (reason instanceof ToolchainError) stop({ code: reason.code, message: reason.message }, 'ABORTED');
    else stop({ code: 'ABORTED', message: 'the run was cancelled by its caller' }, 'ABORTED');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    if (deadline !== undefined) clock.clearTimeout(deadline);
    signal?.removeEventListener('abort', onAbort);
  };
}
