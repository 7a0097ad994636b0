import type { StepRecord } from '../run-model/step-record.js';
import type { RunControl, Stoppable, StepRecorder } from '../run-model/recording.js';
import type { RunResult } from '../run-model/result.js';
import type { NewRun, RunEnd, StoredRun } from './types.js';

// One run in the memory store (memory.ts). A run the engine begins here records its steps, hears
// its end and is stopped through its entry directly. Its StoredRun is made when something reads
// it: until then the entry keeps what `begin` was given and how the run ended, so a run nobody
// looks up never has one (a fourteen-field object and three boxed timestamps per run).

export type MutableRun = { -readonly [K in keyof StoredRun]: StoredRun[K] };

/**
 * A run begun here: where its step results and its end go, and how it is stopped. One object per
 * run, and the run calls it directly: no closure, promise or Map entry of the engine's own.
 */
export interface LiveRun extends StepRecorder, RunControl {}

export class Entry implements LiveRun {
  readonly id: string;
  /** What stops the run, while it executes in this process (begin). */
  live: Stoppable | undefined = undefined;
  /** The number of the store's finish this run's last end was (0: it never ended). */
  finishSeq = 0;
  /**
   * Step results as recorded, kept as the executor made them: appended to, made into a Map (a later
   * record of a key replacing an earlier one) only when read — a run of 10,000 steps grew and
   * rehashed a Map on every run.
   */
  private readonly records: StepRecord[] = [];
  /** Each record's key, once one differs from its step's name (a for_each element, a sub-chain's step): until then the names are the keys. */
  private keys: string[] | undefined = undefined;
  /** `steps()` once read. */
  private index: Map<string, StepRecord> | undefined = undefined;
  private stored: MutableRun | undefined = undefined;
  private given: NewRun | undefined;
  private ended: RunEnd | undefined = undefined;

  constructor(
    given: NewRun,
    private readonly onEnd: (entry: Entry, end: RunEnd) => void,
  ) {
    this.id = given.id;
    this.given = given;
  }

  /** The run as the store keeps it, changed in place (made on first read). */
  get run(): MutableRun {
    return this.stored ?? this.made();
  }

  /** Not finished: running, or parked waiting (a waiting run is never forgotten). */
  get running(): boolean {
    return this.stored !== undefined ? this.stored.status === 'running' || this.stored.status === 'waiting' : this.ended === undefined;
  }

  /** The run ended (or ended again, redriven). */
  end(end: RunEnd): void {
    const run = this.stored;
    if (run === undefined) {
      this.ended = end;
      return;
    }
    run.status = end.status;
    run.outputs = end.outputs;
    run.error = end.error;
    run.finished_at = run.updated_at = end.finished_at;
    run.owner = run.lease_until = null;
  }

  /**
   * The step results by key, a later one replacing an earlier one: made on the first read, then
   * kept up to date by `record` (made anew per read, recording through the store's API — a step
   * or a group commit at a time — cost each write the whole run so far). Read-only for callers.
   */
  steps(): ReadonlyMap<string, StepRecord> {
    if (this.index === undefined) {
      this.index = new Map();
      for (let i = 0; i < this.records.length; i++) this.index.set(this.keys?.[i] ?? this.records[i]!.step, this.records[i]!);
    }
    return this.index;
  }

  record(key: string, record: StepRecord): void {
    if (this.keys === undefined && key !== record.step) this.keys = this.records.map((r) => r.step);
    this.records.push(record);
    this.keys?.push(key);
    this.index?.set(key, record);
  }

  bind(run: Stoppable): void {
    this.live = run;
  }

  finished(result: RunResult, at: number): void {
    this.live = undefined;
    // endStatus (runs/stored-result.ts), which the store may not import: runs depends on the store.
    const status = result.status;
    // A run with nothing left but waits has not ended: the engine parks it (parkRun).
    if (status === 'waiting') return;
    this.onEnd(this, { status, outputs: status === 'succeeded' ? result.outputs : null, error: result.error ?? null, finished_at: at });
  }

  /** Makes the StoredRun from what `begin` was given and the end heard before, and keeps it. */
  private made(): MutableRun {
    const r = this.given!;
    this.given = undefined;
    const run: MutableRun = {
      id: r.id,
      chain: r.chain,
      chain_hash: r.chain_hash,
      input: r.input,
      status: 'running',
      created_at: r.now,
      updated_at: r.now,
      finished_at: null,
      outputs: null,
      error: null,
      owner: r.owner,
      lease_until: r.lease_until,
      epoch: 1,
      cancel_requested: false,
      queue: r.queue ?? null,
      rerun_of: r.rerun_of ?? null,
      rerun_from: r.rerun_from ?? null,
    };
    this.stored = run;
    if (this.ended !== undefined) this.end(this.ended);
    this.ended = undefined;
    return run;
  }
}
