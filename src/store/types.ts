import type { ToolchainError } from '../common/errors.js';
import type { RunError } from '../run-model/result.js';
import type { StepRecord } from '../run-model/step-record.js';
import type { TriggerControlStore } from './trigger-control-types.js';
import type { WaitStore } from './wait-types.js';

// The run store: one small driver contract, one file per driver (memory, sqlite,
// postgres, redis), one conformance suite run against each. A store keeps runs and their step
// results; the engine decides everything else (who may run what, when a run is resumable).
//
// Ownership and fencing: a run is owned by one engine at a time (`owner`, with a lease that the
// owner renews while it runs). Every claim bumps the run's `epoch`; every write carries the epoch
// its writer holds, and a write under an older epoch is refused (STORE_FENCED), so an owner that
// lost its lease — paused, partitioned, or simply slow — can never overwrite what the new owner
// records.

/**
 * `waiting`: parked until a wait of its steps is over (a sleep, an event, a decision); no process
 * owns it meanwhile. `compensation_failed`: it failed, and a compensation of one of its steps
 * failed for good too.
 */
export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'compensation_failed' | 'cancelled';

/**
 * `normal` survives a crash of the process (kill -9); `full` also survives power loss; both hold
 * a step until the results it reads are written. `none` writes as `normal` does but lets steps
 * go on before: a crash may re-run finished steps with different results.
 */
export type Durability = 'none' | 'normal' | 'full';

/** One run, as the store keeps it. Times are milliseconds since the epoch. */
export interface StoredRun {
  readonly id: string;
  readonly chain: string;
  /** sha256 of the chain file's text the run was started with (ChainPlan.hash). */
  readonly chain_hash: string;
  readonly input: unknown;
  readonly status: RunStatus;
  readonly created_at: number;
  /** Set by create, claim, lease renewal, cancel request and finish (not by recorded steps). */
  readonly updated_at: number;
  readonly finished_at: number | null;
  /** The run's outputs once it succeeded; null otherwise. */
  readonly outputs: unknown;
  readonly error: RunError | null;
  /** Who executes it (`host:pid:nonce`); null once it finished. */
  readonly owner: string | null;
  /** Until when the owner's lease holds; null once finished. */
  readonly lease_until: number | null;
  /** Bumped by every claim. */
  readonly epoch: number;
  /** Someone asked for it to stop (a cancel); its owner stops it. */
  readonly cancel_requested: boolean;
  /**
   * The queue (its name) whose workers execute the run: set by the submitter that enqueued it and
   * by every claim (a worker's claim names its queue; a claim in a process of its own clears it).
   * Null for a run that no queue executes. A queue's reconciler looks only at its own runs.
   */
  readonly queue: string | null;
  /** The run this one re-runs (`toolchain rerun`), or null for a run started anew. */
  readonly rerun_of: string | null;
  /** The step a re-run started from (the steps it does not lead to kept their recorded outputs); null: it ran every step again. */
  readonly rerun_from: string | null;
}

/**
 * A step result with its key: the step name, `name[i]` for an element of a for_each,
 * `parent›name` for a step of a sub-chain (nested: `a›b›c`, `a›b[2]`).
 */
export interface StoredStep extends StepRecord {
  readonly key: string;
  /** The step's results in earlier executions of the run (before it was resumed), oldest first. */
  readonly earlier?: readonly EarlierResult[];
  /** On a result recorded by a resumed execution: when the run was resumed. */
  readonly resumed_at?: number;
  /** On a result a re-run kept (it did not run the step): the run whose result it is. */
  readonly kept_from?: string;
}

/** A result a resumed run's step had before it ran again: failed, or skipped because of a failure. */
export interface EarlierResult {
  readonly status: StepRecord['status'];
  readonly attempts: number;
  readonly started_at: number;
  readonly duration_ms: number;
  readonly error?: StepRecord['error'];
  readonly resumed_at?: number;
}

export interface NewRun {
  readonly id: string;
  readonly chain: string;
  readonly chain_hash: string;
  readonly input: unknown;
  readonly owner: string;
  readonly lease_until: number;
  readonly now: number;
  /** The queue that executes it (default none: the creating process does). */
  readonly queue?: string;
  /** A re-run: the run it re-runs, and the step it starts from (none: every step). */
  readonly rerun_of?: string;
  readonly rerun_from?: string;
}

export type CreateOutcome =
  /** The run was created, owned by `owner` at epoch 1, status `running`. */
  | { readonly created: true; readonly run: StoredRun }
  /** A run with that id existed already: returned as it is, unchanged. */
  | { readonly created: false; readonly run: StoredRun };

export interface Claim {
  readonly owner: string;
  readonly lease_until: number;
  readonly now: number;
  /** The epoch the claimer saw: the claim succeeds only if the run still has it (compare-and-set). */
  readonly expected_epoch: number;
  /** The queue whose worker claims it; none (the default) for a claim outside any queue. */
  readonly queue?: string;
}

export type ClaimOutcome = { readonly claimed: true; readonly run: StoredRun } | { readonly claimed: false; readonly run: StoredRun | undefined };

/** Step results of one run written together, under the epoch its writer holds. */
export interface StepBatch {
  readonly run_id: string;
  readonly epoch: number;
  readonly steps: readonly StoredStep[];
  /**
   * The run's end, written after its steps (as finishRun would): a run's last results and its end
   * share a write. Fenced with the steps: a fenced batch records neither.
   */
  readonly end?: RunEnd;
}

export interface RunEnd {
  readonly status: Exclude<RunStatus, 'running' | 'waiting'>;
  readonly outputs: unknown;
  readonly error: RunError | null;
  readonly finished_at: number;
}

export interface RunFilter {
  readonly status?: RunStatus;
  readonly chain?: string;
  /** Only the runs of this queue. */
  readonly queue?: string;
  /** Only the re-runs of this run. */
  readonly rerun_of?: string;
  /** Default 50. */
  readonly limit?: number;
  /**
   * Told about each run that cannot be read back (STORE_CORRUPT naming it), which the listing then
   * leaves out. Without it such a run fails the whole listing with that error.
   */
  readonly onCorrupt?: (error: ToolchainError) => void;
}

export interface RunStore {
  /** The store's URL without credentials, for messages. */
  readonly url: string;
  /** Runs that wait: their waits, parked runs and events (wait-types.ts). */
  readonly waits: WaitStore;
  /** Triggers people paused, and when each was resumed (trigger-control-types.ts). */
  readonly triggers: TriggerControlStore;
  /** Creates a run unless one with that id exists (atomic: of two concurrent creates, one wins). */
  createRun(run: NewRun): Promise<CreateOutcome>;
  /**
   * Optional: creates several runs, each as createRun would, in one write (one commit). The group
   * recorder gives a driver that has it the runs that start together; without it, createRun each.
   */
  createRuns?(runs: readonly NewRun[]): Promise<readonly CreateOutcome[]>;
  /**
   * Takes a run for a new owner: status `running`, the new owner and lease, epoch + 1, cancel flag
   * and finish fields cleared — if its epoch is still `expected_epoch`. Used to resume a run whose
   * owner died and to redrive a failed or cancelled one; the engine decides when that is allowed.
   */
  claimRun(id: string, claim: Claim): Promise<ClaimOutcome>;
  /**
   * Records step results. A success is final: once a key has a `succeeded` record, later records
   * for it are ignored (of two owners that both ran a step, the first to record wins); a `failed`
   * or `skipped` record is replaced by a later one (a redriven step that now succeeds). Atomic per
   * batch entry; a batch entry whose run's epoch is no longer the writer's is refused with no
   * effect: its result is 'fenced'. An entry with an `end` also finishes its run, after its steps.
   * Throws a ToolchainError STORE_* when the store cannot be written.
   */
  recordSteps(batches: readonly StepBatch[]): Promise<readonly ('ok' | 'fenced')[]>;
  /** Ends a run: status, outputs, error; owner and lease cleared. Fenced like recordSteps. */
  finishRun(id: string, epoch: number, end: RunEnd): Promise<'ok' | 'fenced'>;
  /**
   * Extends the owner's lease; 'fenced' if another claim happened or the run is no longer running
   * (a finished run has no lease). Also reports a pending cancel.
   */
  renewLease(id: string, epoch: number, leaseUntil: number, now: number): Promise<{ readonly result: 'ok' | 'fenced'; readonly cancel_requested: boolean }>;
  /** Asks a running run to stop (a finished one is left as it is); the run as it is afterwards (undefined: no such run). */
  requestCancel(id: string, now: number): Promise<StoredRun | undefined>;
  getRun(id: string): Promise<StoredRun | undefined>;
  /** Every step result of a run, in the order their keys were first recorded (a replaced result keeps its place). */
  getSteps(id: string): Promise<readonly StoredStep[]>;
  /** Newest first (by created_at; runs created in the same millisecond in no promised order). */
  listRuns(filter?: RunFilter): Promise<readonly StoredRun[]>;
  /** Deletes finished runs (their steps and waits) that finished before `finishedBefore`, and events sent before it; how many runs went. */
  prune(finishedBefore: number): Promise<number>;
  close(): Promise<void>;
}

export interface StoreOptions {
  readonly durability?: Durability;
}
