import { ToolchainError } from '../common/errors.js';
import type { CreateOutcome, NewRun, RunEnd, RunStore, StepBatch, StoredStep } from '../store/types.js';

// Step results go to the store in groups (group commit): one write is in flight at a time, and
// every result that completes while it is — of any run — goes into the next one (one transaction,
// one round trip, one disk flush). A caller that must not go on before a result is recorded (a
// step that reads it) asks `afterWrite`; a run is reported finished only after `settled` says all
// its results are written. The run's end goes with its last results (one commit, not two), and
// runs that start together are created in one write where the store can (createRuns). A store
// that keeps runs in this process (memory) survives no crash anyway: its results are written
// once, when the run ends.

/** Told once the results recorded so far for a run are written (`failed`: they never will be). */
export type WriteWaiter = (failed: boolean) => void;

interface Pending {
  epoch: number;
  buffer: StoredStep[];
  /** The run's end, written with the results in `buffer`. */
  end: RunEnd | undefined;
  /** Waiting for the results in `buffer`. */
  waiters: WriteWaiter[];
  /** Waiting for the results of the write in flight. */
  flying: WriteWaiter[];
  /** The run has results in the write in flight. */
  inFlight: boolean;
  failure: ToolchainError | undefined;
}

interface Creating {
  readonly run: NewRun;
  readonly resolve: (outcome: CreateOutcome) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupRecorder {
  private readonly runs = new Map<string, Pending>();
  /** Runs to create in the next write. */
  private creating: Creating[] = [];
  private scheduled = false;
  /** A write is in flight: results wait for the next one (a later write never overtakes an earlier one). */
  private writing = false;
  private readonly flushSoon = (): void => this.flush();

  constructor(
    private readonly store: RunStore,
    private readonly inProcess: boolean,
    /** Told once when a run's results cannot be written (STORE_*), so that the run stops. */
    private readonly onFailure: (runId: string, error: ToolchainError) => void,
  ) {}

  /** Creates a run in the next write (createRun's outcome); a store without createRuns is asked at once. */
  create(run: NewRun): Promise<CreateOutcome> {
    if (this.store.createRuns === undefined) return this.store.createRun(run);
    return new Promise((resolve, reject) => {
      this.creating.push({ run, resolve, reject });
      this.schedule();
    });
  }

  begin(runId: string, epoch: number): void {
    this.runs.set(runId, { epoch, buffer: [], end: undefined, waiters: [], flying: [], inFlight: false, failure: undefined });
  }

  record(runId: string, step: StoredStep): void {
    const pending = this.runs.get(runId);
    if (pending === undefined || pending.failure !== undefined) return;
    pending.buffer.push(step);
    if (!this.inProcess) this.schedule();
  }

  /** Calls `waiter` once every result recorded for the run until now is written (at once when they are). */
  afterWrite(runId: string, waiter: WriteWaiter): void {
    const pending = this.runs.get(runId);
    if (pending === undefined) return waiter(false);
    if (pending.failure !== undefined) return waiter(true);
    if (pending.buffer.length > 0) pending.waiters.push(waiter);
    else if (pending.inFlight) pending.flying.push(waiter);
    else waiter(false);
  }

  /**
   * Resolves once every result recorded for the run is written, and its `end` with the last of
   * them (none: the run stays running); rejects with why not (STORE_FENCED, STORE_*). Forgets the run.
   */
  async settled(runId: string, end: RunEnd | undefined): Promise<void> {
    const pending = this.runs.get(runId);
    if (pending === undefined) return;
    if (pending.failure === undefined) pending.end = end;
    const unwritten = (): boolean => pending.buffer.length > 0 || pending.end !== undefined;
    if (unwritten() && !this.writing) this.flush();
    if (unwritten() || pending.inFlight) {
      await new Promise<void>((resolve) => (unwritten() ? pending.waiters : pending.flying).push(() => resolve()));
    }
    this.runs.delete(runId);
    if (pending.failure !== undefined) throw pending.failure;
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(this.flushSoon);
  }

  private flush(): void {
    this.scheduled = false;
    if (this.writing) return;
    const batches: StepBatch[] = [];
    const owners: Pending[] = [];
    for (const [runId, pending] of this.runs) {
      if (pending.buffer.length === 0 && pending.end === undefined) continue;
      batches.push(pending.end === undefined ? { run_id: runId, epoch: pending.epoch, steps: pending.buffer } : { run_id: runId, epoch: pending.epoch, steps: pending.buffer, end: pending.end });
      owners.push(pending);
      pending.buffer = [];
      pending.end = undefined;
      pending.flying = pending.waiters;
      pending.waiters = [];
      pending.inFlight = true;
    }
    const creating = this.creating;
    this.creating = [];
    if (batches.length === 0 && creating.length === 0) return;
    this.writing = true;
    const done = (results: readonly string[] | undefined, error: unknown): void => {
      this.writing = false;
      owners.forEach((pending, k) => {
        const runId = batches[k]!.run_id;
        if (results === undefined) this.fail(runId, pending, asStoreError(error, this.store.url));
        else if (results[k] === 'fenced') this.fail(runId, pending, fenced(runId));
        pending.inFlight = false;
        const waiters = pending.flying;
        pending.flying = [];
        const failed = pending.failure !== undefined;
        for (const waiter of waiters) waiter(failed);
      });
      // Runs started, results completed meanwhile (and those the waiters' steps record at once),
      // ends: the next group (a store in this process writes only what a settling run waits for).
      if (this.creating.length > 0) return this.schedule();
      for (const pending of this.runs.values()) {
        if (pending.end !== undefined || (pending.buffer.length > 0 && (!this.inProcess || pending.waiters.length > 0))) return this.schedule();
      }
    };
    // The new runs first (a failure to create them is theirs alone), then the results.
    const created = creating.length === 0 ? Promise.resolve() : this.createAll(creating);
    void created.then(() => {
      if (batches.length === 0) return done([], undefined);
      let write: Promise<readonly string[]>;
      try {
        write = this.store.recordSteps(batches);
      } catch (error) {
        write = Promise.reject(error);
      }
      write.then(
        (results) => done(results, undefined),
        (error: unknown) => done(undefined, error),
      );
    });
  }

  private async createAll(creating: readonly Creating[]): Promise<void> {
    try {
      const outcomes = await this.store.createRuns!(creating.map((c) => c.run));
      creating.forEach((c, i) => c.resolve(outcomes[i]!));
    } catch (error) {
      for (const c of creating) c.reject(error);
    }
  }

  private fail(runId: string, pending: Pending, error: ToolchainError): void {
    if (pending.failure !== undefined) return;
    pending.failure = error;
    pending.buffer = [];
    pending.end = undefined;
    pending.waiters.forEach((waiter) => pending.flying.push(waiter));
    pending.waiters = [];
    this.onFailure(runId, error);
  }
}

export function fenced(runId: string): ToolchainError {
  return new ToolchainError('STORE_FENCED', `run ${runId} was taken over by another owner; this one may not record its results any more`);
}

/** A store's failure as a STORE_* error (drivers throw those already; anything else is wrapped). */
export function asStoreError(error: unknown, url: string): ToolchainError {
  if (error instanceof ToolchainError) return error;
  return new ToolchainError('STORE_WRITE_FAILED', `the run store ${url} could not be written: ${(error as Error)?.message ?? String(error)}`);
}
