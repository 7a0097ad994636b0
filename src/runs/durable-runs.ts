import type { Clock } from '../common/clock.js';
import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { StepRecord } from '../run-model/step-record.js';
import type { ExecutionOptions, RunOptions } from '../executor/types.js';
import type { RunControl, StepRecorder, Stoppable } from '../run-model/recording.js';
import type { RunResult } from '../run-model/result.js';
import { emitRunBounds, type EventListener, type RunEvent } from '../run-model/events.js';
import type { RunWaits } from '../call/index.js';
import type { CheckInput } from '../executor/run-inputs.js';
import { isMemoryStore, type MemoryRunStore } from '../store/memory.js';
import { storedStep } from '../store/stored-step.js';
import type { RunFilter, RunStore, StoredRun } from '../store/types.js';
import { asStoreError, fenced, GroupRecorder } from './group-recorder.js';
import { resumption, withHistory, type Resumption } from './attempt-history.js';
import { runIdConflict } from './run-id-conflict.js';
import { newOwnerId, ownerAlive, QUEUED_OWNER } from './owner.js';
import { endStatus, runDetail, runSummary, storedResult, type RunDetail, type RunSummary } from './stored-result.js';
import { closeWaits, describeWait, StoredRunWaits } from './run-waits.js';
import { cancelRun, endCancelled } from './cancel-run.js';
import { plumbingOf, type InternalStartOptions } from './start-options.js';
import { keepResults, rerunOrigin, type Rerun } from './rerun.js';

// Runs that outlive a process: every run is created in the run store before it starts
// and its step results are recorded as they finish. A run id chosen by the caller is the run's
// idempotency key: a finished run is answered from the store, a live one refused
// (RUN_IN_PROGRESS), one whose owner died resumed. `resume` also redrives a failed or cancelled
// run. Resuming replays the recorded successes into the run, which then executes only the rest.
// While a run executes, its owner renews its lease and learns of cancellations from the store.

export interface DurableSettings {
  readonly store: RunStore;
  /** The store keeps runs in this process (memory): no leases, cancellation is local. */
  readonly inProcess: boolean;
  /**
   * `durability: none`: steps go on without waiting for the results they read to be written
   * (a crash may re-run finished steps with different results). Otherwise a step starts only
   * once every result it reads is recorded.
   */
  readonly writeBehind?: boolean;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly newRunId: () => string;
  readonly chain: (name: string) => ChainPlan | undefined;
  /** The run's input against its chain's `inputs`: defaults filled, strings coerced, or why not. */
  readonly checkInput: CheckInput;
  /** Executes a plan with the engine's tools. */
  readonly execute: (plan: ChainPlan, input: unknown, options: ExecutionOptions) => Promise<RunResult>;
  /** The result (and events) of a run that could not start. */
  readonly refuse: (chain: string, runId: string | undefined, error: { code: ErrorCode; message: string }, input: unknown, options: RunOptions) => RunResult;
  /** A run was parked here until `wakeAt`, or ended: for the waker. */
  readonly onParked?: (runId: string, wakeAt: number | null) => void;
  readonly onEnded?: (result: RunResult) => void;
  /** Where the end of a run no execution is at goes (a waiting run cancelled): the engine's observer. */
  readonly onEvent?: EventListener;
}

/** A run executing here: how to stop it (bound when it starts; a stop asked for before that waits for it). */
class Active implements RunControl {
  private run: Stoppable | undefined;
  private pending: ToolchainError | undefined;

  constructor(readonly epoch: number) {}

  bind(run: Stoppable): void {
    this.run = run;
    if (this.pending) run.halt(this.pending);
  }

  stop(reason: ToolchainError): void {
    if (this.run) this.run.halt(reason);
    else this.pending ??= reason;
  }
}

export class DurableRuns {
  private readonly owner = newOwnerId();
  private readonly recorder: GroupRecorder;
  private readonly active = new Map<string, Active>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly s: DurableSettings) {
    this.recorder = new GroupRecorder(s.store, s.inProcess, (runId, error) => this.active.get(runId)?.stop(error));
  }

  start(plan: ChainPlan, given: unknown, options: InternalStartOptions): Promise<RunResult> {
    // An input the chain refuses makes no run: nothing is recorded. The input recorded is the
    // one the steps see (`--input ms=1500` is the number 1500 where the schema says integer).
    const checked = this.s.checkInput(plan, given);
    if (!checked.ok) return this.refuseInput(plan, given, options, checked.message);
    const input = checked.input;
    const store = this.s.store;
    if (isMemoryStore(store) && options.runId === undefined && !mayWait(plan, options)) return this.startInMemory(store, plan, input, options);
    return this.startStored(plan, input, options);
  }

  private async startStored(plan: ChainPlan, input: unknown, options: InternalStartOptions): Promise<RunResult> {
    const id = options.runId ?? this.s.newRunId();
    // A store in this process keeps the input as given; the others write it as JSON.
    const stored = this.s.inProcess ? input : jsonCopy(input);
    if (stored instanceof ToolchainError) return this.s.refuse(plan.name, id, stored, input, options);
    const now = this.s.clock.now();
    let outcome;
    try {
      outcome = await this.recorder.create({ id, chain: plan.name, chain_hash: plan.hash, input: stored, owner: this.owner, lease_until: now + this.s.leaseMs, now });
    } catch (error) {
      return this.s.refuse(plan.name, id, asStoreError(error, this.s.store.url), input, options);
    }
    if (outcome.created) return this.execute(plan, outcome.run, stored, options, undefined);
    const run = outcome.run;
    const conflict = runIdConflict(run, plan.name, stored);
    if (conflict) return this.s.refuse(plan.name, id, conflict, input, options);
    // The id names a run already — answer from the store, refuse, or take it over.
    if (run.status !== 'running') return storedResult(run, await this.s.store.getSteps(id), plan);
    return this.takeOver(run, { ...options, allowChanged: options.allowChanged ?? false });
  }

  /**
   * A re-run (rerun.ts): a new run, recorded with its origin, that starts with the origin's kept
   * results recorded as its own — so that it, and any later resume of it, restores them.
   */
  async startRerun(r: Rerun, options: InternalStartOptions): Promise<RunResult> {
    const { plan } = r;
    const checked = this.s.checkInput(plan, r.input);
    if (!checked.ok) return this.s.refuse(plan.name, options.runId, { code: 'INPUT_INVALID', message: checked.message }, r.input, options);
    const id = options.runId ?? this.s.newRunId();
    const stored = this.s.inProcess ? checked.input : jsonCopy(checked.input);
    if (stored instanceof ToolchainError) return this.s.refuse(plan.name, id, stored, r.input, options);
    const now = this.s.clock.now();
    let run: StoredRun;
    try {
      run = await keepResults(this.s.store, await this.recorder.create({ id, chain: plan.name, chain_hash: plan.hash, input: stored, owner: this.owner, lease_until: now + this.s.leaseMs, now, ...rerunOrigin(r) }), r);
    } catch (error) {
      return this.s.refuse(plan.name, id, asStoreError(error, this.s.store.url), r.input, options);
    }
    return this.execute(plan, run, stored, options, new Map(r.kept.map((s) => [s.key, s])));
  }

  /** A run id chosen by the caller may name a run already, which is answered as ever; else the input is refused. */
  private async refuseInput(plan: ChainPlan, input: unknown, options: InternalStartOptions, message: string): Promise<RunResult> {
    const refusal = (): RunResult => this.s.refuse(plan.name, options.runId, { code: 'INPUT_INVALID', message }, input, options);
    if (options.runId === undefined) return refusal();
    try {
      if ((await this.s.store.getRun(options.runId)) === undefined) return refusal();
    } catch {
      return refusal();
    }
    return this.startStored(plan, input, options);
  }

  /**
   * A new run in the memory store: the same steps as `execute`, done synchronously — the store is
   * this process's memory, and a promise per write would cost every run several microseconds. The
   * store's entry for the run records its steps, hears its end and stops it (cancel goes through
   * the store): the engine adds no promise, closure or Map entry of its own.
   */
  private startInMemory(store: MemoryRunStore, plan: ChainPlan, input: unknown, options: InternalStartOptions): Promise<RunResult> {
    const id = this.s.newRunId();
    const now = this.s.clock.now();
    const live = store.begin({ id, chain: plan.name, chain_hash: plan.hash, input, owner: this.owner, lease_until: now + this.s.leaseMs, now });
    return this.s.execute(plan, input, executionOptions(options, id, live, live, undefined, undefined, now));
  }

  /** Executing in this process now (started here, through the engine or the memory store). */
  private isActive(id: string): boolean {
    return this.active.has(id) || (isMemoryStore(this.s.store) && this.s.store.isLive(id));
  }

  /** Continues a run cut short (crash, kill, cancel) or failed (redrive). */
  async resume(id: string, options: InternalStartOptions): Promise<RunResult> {
    let run: StoredRun | undefined;
    try {
      run = await this.s.store.getRun(id);
    } catch (error) {
      return this.s.refuse('(unknown)', id, asStoreError(error, this.s.store.url), undefined, options);
    }
    if (run === undefined) return this.s.refuse('(unknown)', id, { code: 'RUN_NOT_FOUND', message: `no run ${id} in the run store ${this.s.store.url}` }, undefined, options);
    if (run.status === 'succeeded') return storedResult(run, await this.s.store.getSteps(id), this.s.chain(run.chain));
    if (run.status === 'waiting' && plumbingOf(options).wake !== true) {
      const refusal = await this.notDue(run);
      if (refusal !== undefined) return this.s.refuse(run.chain, id, { code: 'RUN_WAITING', message: refusal }, run.input, options);
    }
    return this.takeOver(run, options);
  }

  /** Why a waiting run cannot go on yet (undefined: a wait of it is over, or its time came). */
  private async notDue(run: StoredRun): Promise<string | undefined> {
    const at = await this.s.store.waits.wakeAt(run.id);
    if (at !== null && at !== undefined && at <= this.s.clock.now()) return undefined;
    const open = await this.s.store.waits.listWaits({ run_id: run.id, open: true, limit: 5 });
    const what = open.map(describeWait).join(', ');
    return `run ${run.id} is waiting${what ? ` for ${what}` : ''}; it goes on by itself once that is over (send the event with 'toolchain emit', decide with 'toolchain approvals')`;
  }

  private async takeOver(run: StoredRun, options: InternalStartOptions): Promise<RunResult> {
    const refuse = (code: ErrorCode, message: string): RunResult => this.s.refuse(run.chain, run.id, { code, message }, run.input, options);
    const now = this.s.clock.now();
    // This engine owns the run but runs it no more (its end could not be written): it is free.
    const abandonedHere = run.owner === this.owner && !this.isActive(run.id);
    const live = this.isActive(run.id) || (plumbingOf(options).claimLive !== true && ownerAlive(run, now));
    if (run.status === 'running' && !abandonedHere && live) {
      return refuse('RUN_IN_PROGRESS', `run ${run.id} is in progress (owner ${run.owner}); wait for it, or cancel it with 'toolchain runs cancel ${run.id}'`);
    }
    const plan = this.s.chain(run.chain);
    if (plan === undefined) return refuse('CHAIN_NOT_FOUND', `run ${run.id} ran chain '${run.chain}', which is not loaded`);
    if (plan.hash !== run.chain_hash && options.allowChanged !== true) {
      return refuse('CHAIN_CHANGED', `chain '${run.chain}' changed since run ${run.id} started; resume with --allow-changed (allowChanged: true) to continue with the new definition`);
    }
    const queue = plumbingOf(options).queue;
    try {
      const claim = await this.s.store.claimRun(run.id, { owner: this.owner, lease_until: now + this.s.leaseMs, now, expected_epoch: run.epoch, ...(queue !== undefined ? { queue } : {}) });
      if (!claim.claimed) return refuse('RUN_IN_PROGRESS', `run ${run.id} was taken over by another owner at the same moment`);
      // Every result, in the order recorded: successes are not run again, and a run whose steps had
      // ended (its failure handling under way) is rebuilt from all of them.
      const restored = new Map<string, StepRecord>();
      const recorded = await this.s.store.getSteps(run.id);
      for (const step of recorded) restored.set(step.key, step);
      if (run.status === 'waiting') emitSafely(options, { type: 'run:woken', run_id: run.id, chain: run.chain, timestamp: now });
      // A queued run that no worker had taken up is executed for the first time here: no resume.
      return this.execute(plan, claim.run, run.input, options, restored, run.owner === QUEUED_OWNER ? undefined : resumption(now, recorded));
    } catch (error) {
      return refuse(asStoreError(error, this.s.store.url).code, asStoreError(error, this.s.store.url).message);
    }
  }

  private async execute(plan: ChainPlan, run: StoredRun, input: unknown, options: InternalStartOptions, restored: ReadonlyMap<string, StepRecord> | undefined, resumed?: Resumption): Promise<RunResult> {
    const { id, epoch } = run;
    const active = new Active(epoch);
    // Only a run that may wait keeps its waits: for any other, nothing is made per execution.
    const waits = mayWait(plan, options) ? new StoredRunWaits({ store: this.s.store, runId: id, chain: plan.name, epoch, clock: this.s.clock, onEvent: options.onEvent }) : undefined;
    this.active.set(id, active);
    this.recorder.begin(id, epoch);
    this.keepLeases();
    let result: RunResult;
    try {
      // The barrier: a step that reads a result waits for its write (a store in this process writes at the end: no crash to survive).
      const whenRecorded = this.s.writeBehind !== true && !this.s.inProcess ? (then: (failed: boolean) => void) => this.recorder.afterWrite(id, then) : undefined;
      const recorder: StepRecorder =
        resumed === undefined
          ? { record: (key: string, record: StepRecord) => this.recorder.record(id, storedStep(key, record)), whenRecorded }
          : { record: (key: string, record: StepRecord) => this.recorder.record(id, withHistory(storedStep(key, record), resumed)), whenRecorded };
      result = await this.s.execute(plan, input, executionOptions(options, id, recorder, active, restored, waits));
    } finally {
      this.active.delete(id);
      this.keepLeases();
    }
    // Reported finished only once every result it recorded is written, and its end with the last
    // of them. Parked at a distributed for_each, it is still running: its worker resumes it later;
    // parked on a wait, it is parked in the store once its results are written.
    const suspended = result.error?.code === 'RUN_SUSPENDED';
    const parks = result.status === 'waiting';
    const status = endStatus(result);
    const end = suspended || parks ? undefined : { status, outputs: status === 'succeeded' ? result.outputs : null, error: result.error ?? null, finished_at: this.s.clock.now() };
    try {
      await this.recorder.settled(id, end);
      if (parks) return await this.park(plan, run, waits!, result, options);
      if (end !== undefined && status !== 'succeeded' && waits !== undefined) await closeWaits(this.s.store, id, end.finished_at, `run ${id} ended ${status}`);
    } catch (error) {
      const e = asStoreError(error, this.s.store.url);
      if (result.status === 'succeeded' || result.error?.code !== e.code) result = { ...result, status: 'failed', outputs: null, error: { code: e.code, message: e.message } };
    }
    this.s.onEnded?.(result);
    return result;
  }

  /** Parks a run with nothing left but waits: a record in the store that a waker continues. */
  private async park(plan: ChainPlan, run: StoredRun, waits: StoredRunWaits, result: RunResult, options: RunOptions): Promise<RunResult> {
    const { waits: open, ids, wakeAt } = waits.parking();
    const now = this.s.clock.now();
    if ((await this.s.store.waits.parkRun(run.id, run.epoch, wakeAt, ids, now)) === 'fenced') throw fenced(run.id);
    emitSafely(options, { type: 'run:waiting', run_id: run.id, chain: plan.name, timestamp: now, waits: open, wake_at: wakeAt });
    this.s.onParked?.(run.id, wakeAt);
    return result;
  }

  /** Ends as cancelled a run that was asked to stop and whose owner died before it could. */
  async endCancelled(run: StoredRun): Promise<void> {
    await endCancelled(this.s.store, run, this.s.clock.now(), this.owner);
  }

  /** Asks a run to stop: at once if it runs here, through the store wherever it runs; a waiting run ends cancelled now. */
  async cancel(id: string): Promise<StoredRun | undefined> {
    this.active.get(id)?.stop(cancelled(id));
    const run = await cancelRun(this.s.store, id, this.s.clock.now(), this.owner);
    if (run?.status === 'waiting') {
      // No execution is at it to say so: its end is told here, as a woken run's would be (run:started,
      // then run:finished), so that what counts runs in flight stays balanced.
      const ended = await this.s.store.getRun(id);
      if (ended?.status !== 'cancelled') return run;
      const result = storedResult(ended, await this.s.store.getSteps(id), this.s.chain(ended.chain));
      if (this.s.onEvent !== undefined) emitRunBounds(this.s.onEvent, result, run.input, ended.finished_at ?? this.s.clock.now());
      this.s.onEnded?.(result);
    }
    return run;
  }

  async list(filter: RunFilter = {}): Promise<RunSummary[]> {
    const now = this.s.clock.now();
    return (await this.s.store.listRuns(filter)).map((run) => runSummary(run, now));
  }

  async get(id: string): Promise<RunDetail | undefined> {
    const run = await this.s.store.getRun(id);
    if (run === undefined) return undefined;
    const [steps, reruns] = await Promise.all([this.s.store.getSteps(id), this.s.store.listRuns({ rerun_of: id, limit: 100 })]);
    return runDetail(run, steps, this.s.chain(run.chain), this.s.clock.now(), reruns.map((r) => r.id));
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * While runs execute against a shared store: renew their leases and look for cancellations,
   * often enough that a `runs cancel` from another process stops a run within a second.
   */
  private keepLeases(): void {
    if (this.s.inProcess) return;
    if (this.active.size === 0) return this.close();
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.renewAll(), Math.min(500, this.s.leaseMs / 3));
    this.timer.unref();
  }

  private async renewAll(): Promise<void> {
    const now = this.s.clock.now();
    await Promise.all(
      [...this.active].map(async ([id, active]) => {
        try {
          const renewed = await this.s.store.renewLease(id, active.epoch, now + this.s.leaseMs, now);
          if (renewed.result === 'fenced') active.stop(fenced(id));
          else if (renewed.cancel_requested) active.stop(cancelled(id));
        } catch {
          // The store is unreachable for now: the next tick tries again, and writes report it.
        }
      }),
    );
  }
}

/**
 * The caller's options with the run's own parts: one literal with every key, absent ones
 * undefined (this is on every run's path). Only the caller's fields are read from `o`: a recorder,
 * restored steps, a control or waits a caller slipped in are not (RunOptions has none of them).
 */
function executionOptions(o: InternalStartOptions, runId: string, recorder: StepRecorder, control: RunControl, restored: ReadonlyMap<string, StepRecord> | undefined, waits?: RunWaits, startedAt?: number): ExecutionOptions {
  return { signal: o.signal, onEvent: o.onEvent, approve: o.approve, concurrency: o.concurrency, debug: o.debug, onProgress: o.onProgress, runId, startedAt, recorder, restored, control, mocks: o.mocks, distributor: plumbingOf(o).distributor, waits };
}

/** A run that may wait (a waiting step, a sub-chain, an approver that may answer 'wait') goes through the store's full path in memory too. */
export function mayWait(plan: ChainPlan, options: RunOptions): boolean {
  return plan.mayWait || options.approve !== undefined;
}

function emitSafely(options: RunOptions, event: RunEvent): void {
  try {
    options.onEvent?.(event);
  } catch {
    // a listener's exception is its own problem
  }
}

function cancelled(id: string): ToolchainError {
  return new ToolchainError('ABORTED', `run ${id} was cancelled`);
}

/** The input as the store keeps it (JSON), or INPUT_INVALID for one that is not JSON. */
function jsonCopy(input: unknown): unknown {
  try {
    const text = JSON.stringify(input ?? {});
    return JSON.parse(text) as unknown;
  } catch (error) {
    return new ToolchainError('INPUT_INVALID', `the input cannot be recorded as JSON: ${(error as Error).message}`);
  }
}
