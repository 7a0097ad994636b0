import { ToolchainError } from '../common/errors.js';
import type { RunStore, StepBatch, StoredStep } from '../store/types.js';

// Step results go to the store in small groups: everything recorded during one turn of the event
// loop is written together (one transaction, one round trip), which is what lets a durable run
// keep its speed. A run is reported finished only after `settled` says all its results are
// written. A store that keeps runs in this process (memory) survives no crash anyway: its results
// are written once, when the run ends.

interface Pending {
  epoch: number;
  buffer: StoredStep[];
  /** The last write that carried this run's results. */
  written: Promise<void>;
  failure: ToolchainError | undefined;
}

export class GroupRecorder {
  private readonly runs = new Map<string, Pending>();
  private scheduled = false;
  /** Writes happen one after another, so that a later write never overtakes an earlier one. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: RunStore,
    private readonly inProcess: boolean,
    /** Told once when a run's results cannot be written (STORE_*), so that the run stops. */
    private readonly onFailure: (runId: string, error: ToolchainError) => void,
  ) {}

  begin(runId: string, epoch: number): void {
    this.runs.set(runId, { epoch, buffer: [], written: Promise.resolve(), failure: undefined });
  }

  record(runId: string, step: StoredStep): void {
    const pending = this.runs.get(runId);
    if (pending === undefined || pending.failure !== undefined) return;
    pending.buffer.push(step);
    if (!this.inProcess && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Resolves once every result recorded for the run is written; rejects with why not. Forgets the run. */
  async settled(runId: string): Promise<void> {
    const pending = this.runs.get(runId);
    if (pending === undefined) return;
    if (pending.buffer.length > 0) this.flush();
    await pending.written.catch(() => undefined);
    this.runs.delete(runId);
    if (pending.failure !== undefined) throw pending.failure;
  }

  private flush(): void {
    this.scheduled = false;
    const batches: StepBatch[] = [];
    const owners: Pending[] = [];
    for (const [runId, pending] of this.runs) {
      if (pending.buffer.length === 0) continue;
      batches.push({ run_id: runId, epoch: pending.epoch, steps: pending.buffer });
      owners.push(pending);
      pending.buffer = [];
    }
    if (batches.length === 0) return;
    const write = this.chain.then(() => this.store.recordSteps(batches));
    this.chain = write.catch(() => undefined);
    owners.forEach((pending, k) => {
      pending.written = write.then(
        (results) => {
          if (results[k] === 'fenced') this.fail(batches[k]!.run_id, pending, fenced(batches[k]!.run_id));
        },
        (error: unknown) => this.fail(batches[k]!.run_id, pending, asStoreError(error, this.store.url)),
      );
    });
  }

  private fail(runId: string, pending: Pending, error: ToolchainError): void {
    if (pending.failure !== undefined) return;
    pending.failure = error;
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
