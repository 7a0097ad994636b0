import { ToolchainError } from '../common/errors.js';
import { listLimit } from './run-codec.js';
import { Entry, type LiveRun } from './memory-entry.js';
import { memoryTriggerControls } from './memory-trigger-controls.js';
import { memoryWaits } from './memory-waits.js';
import { storedStep } from './stored-step.js';
import type { Claim, ClaimOutcome, CreateOutcome, NewRun, RunEnd, RunFilter, RunStore, StepBatch, StoredRun, StoredStep } from './types.js';
import type { StepRecord } from '../run-model/step-record.js';

// The run store in memory: the library's default, so that runs can be listed, inspected and
// cancelled in a process that set up nothing. It keeps the newest `maxRuns` finished runs (100 by
// default: a store that holds many runs' results keeps them alive long enough for the garbage
// collector to move them to the old generation, which costs every run). Entries are changed in
// place and copied when read.
//
// Runs the engine begins here are found by id only when someone asks (get, list, cancel): until
// then they wait in `unindexed`, and a run that ends and is forgotten before anyone asked never
// enters the Map. Hashing each new id into a Map and deleting it 100 runs later was a tenth of a
// short run's time, paid by every library user who never looks a run up. Forgetting is a number
// compared when a run is looked up or a list compacted, not a write per run.

export type { LiveRun } from './memory-entry.js';

/**
 * The memory store's synchronous side, which the engine uses for the runs it starts (its writes
 * are assignments in this process: no promise, no batching). The async RunStore methods are the
 * same operations for everything else.
 */
export interface MemoryRunStore extends RunStore {
  readonly inProcess: true;
  /** Creates a run that cannot exist yet (its id is new) and returns where its step results and end go. */
  begin(run: NewRun): LiveRun;
  /** True while a run begun here executes. */
  isLive(id: string): boolean;
}

export function isMemoryStore(store: RunStore): store is MemoryRunStore {
  return (store as Partial<MemoryRunStore>).inProcess === true;
}

/** The least length at which the lists below are compacted: they hold a few hundred runs at most beyond the live ones and the kept ones. */
const COMPACT_FLOOR = 256;

export function createMemoryStore(maxRuns = 100): MemoryRunStore {
  const byId = new Map<string, Entry>();
  /** Runs begun here that `byId` does not hold yet, oldest first (forgotten ones are dropped when compacted). */
  let unindexed: Entry[] = [];
  /** Compact `unindexed` when it reaches this length, and drop forgotten runs from `byId` when it reaches `pruneAt`: twice what survived the last time, so each run pays O(1). */
  let compactAt = COMPACT_FLOOR;
  let pruneAt = COMPACT_FLOOR;
  /** Runs finished so far: each finish is numbered, and one `maxRuns` finishes old is forgotten (Entry.finishSeq). */
  let finishes = 0;

  /** Gone from the store: finished, not running again, and older than the newest `maxRuns` finishes. */
  const forgotten = (entry: Entry): boolean => entry.finishSeq <= finishes - maxRuns && !entry.running;

  /** The id Map, with every run begun so far in it (and perhaps forgotten ones: see `find`). */
  function runs(): Map<string, Entry> {
    if (unindexed.length > 0) {
      for (const entry of unindexed) if (!forgotten(entry)) byId.set(entry.id, entry);
      unindexed = [];
    }
    if (byId.size >= pruneAt) {
      for (const [id, entry] of byId) {
        if (!forgotten(entry)) continue;
        byId.delete(id);
        forget(id);
      }
      pruneAt = Math.max(COMPACT_FLOOR, byId.size * 2);
    }
    return byId;
  }

  /** The run with this id, unless there is none or it was forgotten (then it goes). */
  function find(id: string): Entry | undefined {
    const entry = runs().get(id);
    if (entry === undefined || !forgotten(entry)) return entry;
    byId.delete(id);
    return undefined;
  }

  const owned = (id: string, epoch: number): Entry | undefined => {
    const entry = find(id);
    return entry !== undefined && entry.run.epoch === epoch ? entry : undefined;
  };

  function create(r: NewRun, indexed: boolean): Entry {
    const entry = new Entry(r, finish);
    if (indexed) byId.set(r.id, entry);
    else if (unindexed.push(entry) >= compactAt) {
      unindexed = unindexed.filter((e) => !forgotten(e));
      compactAt = Math.max(COMPACT_FLOOR, unindexed.length * 2);
    }
    return entry;
  }

  function finish(entry: Entry, end: RunEnd): void {
    // Numbered, not queued: forgetting it later reads nothing (an entry a hundred runs old is out of the cache).
    if (entry.running) entry.finishSeq = ++finishes;
    entry.end(end);
  }

  const { forget, pruneEvents, ...waits } = memoryWaits(find);

  return {
    waits,
    triggers: memoryTriggerControls(),
    url: 'memory:',
    inProcess: true,
    begin(r) {
      return create(r, false);
    },
    isLive: (id) => find(id)?.live !== undefined,
    async createRun(r: NewRun): Promise<CreateOutcome> {
      const existing = find(r.id);
      if (existing) return { created: false, run: { ...existing.run } };
      return { created: true, run: { ...create(r, true).run } };
    },
    async claimRun(id: string, claim: Claim): Promise<ClaimOutcome> {
      const current = find(id);
      const entry = current?.run.epoch === claim.expected_epoch ? current : undefined;
      if (!entry) return { claimed: false, run: current ? { ...current.run } : undefined };
      Object.assign(entry.run, { status: 'running', owner: claim.owner, lease_until: claim.lease_until, updated_at: claim.now, epoch: entry.run.epoch + 1, queue: claim.queue ?? null });
      Object.assign(entry.run, { cancel_requested: false, finished_at: null, outputs: null, error: null });
      return { claimed: true, run: { ...entry.run } };
    },
    async recordSteps(batches: readonly StepBatch[]) {
      return batches.map((batch) => {
        const entry = owned(batch.run_id, batch.epoch);
        if (!entry) return 'fenced';
        const steps = entry.steps();
        for (const step of batch.steps) {
          if (steps.get(step.key)?.status === 'succeeded') continue;
          entry.record(step.key, step);
        }
        if (batch.end !== undefined) finish(entry, batch.end);
        return 'ok';
      });
    },
    async finishRun(id: string, epoch: number, end: RunEnd) {
      const entry = owned(id, epoch);
      if (!entry) return 'fenced';
      finish(entry, end);
      return 'ok';
    },
    async renewLease(id: string, epoch: number, leaseUntil: number, now: number) {
      const entry = owned(id, epoch);
      if (!entry || entry.run.status !== 'running') return { result: 'fenced', cancel_requested: entry?.run.cancel_requested ?? false };
      entry.run.lease_until = leaseUntil;
      entry.run.updated_at = now;
      return { result: 'ok', cancel_requested: entry.run.cancel_requested };
    },
    async requestCancel(id: string, now: number) {
      const entry = find(id);
      if (!entry) return undefined;
      if (entry.run.status === 'running') Object.assign(entry.run, { cancel_requested: true, updated_at: now });
      const asked = { ...entry.run };
      // A run begun here stops at once (and, stopping, finishes): the answer is the run as it was asked.
      entry.live?.halt(new ToolchainError('ABORTED', `run ${id} was cancelled`));
      return asked;
    },
    async getRun(id: string) {
      const entry = find(id);
      return entry ? { ...entry.run } : undefined;
    },
    async getSteps(id: string) {
      const entry = find(id);
      return entry ? [...entry.steps()].map(([key, record]) => withHistoryOf(storedStep(key, record), record)) : [];
    },
    async listRuns(filter: RunFilter = {}) {
      const limit = listLimit(filter.limit);
      const out: StoredRun[] = [];
      const all = [...runs().values()].filter((e) => !forgotten(e)).map((e) => e.run).sort((a, b) => b.created_at - a.created_at);
      for (const run of all) {
        if (filter.status !== undefined && run.status !== filter.status) continue;
        if (filter.chain !== undefined && run.chain !== filter.chain) continue;
        if (filter.queue !== undefined && run.queue !== filter.queue) continue;
        if (filter.rerun_of !== undefined && run.rerun_of !== filter.rerun_of) continue;
        out.push({ ...run });
        if (out.length >= limit) break;
      }
      return out;
    },
    async prune(finishedBefore: number) {
      let gone = 0;
      for (const [id, entry] of runs()) {
        if (forgotten(entry)) {
          byId.delete(id);
          forget(id);
        } else if (entry.run.finished_at !== null && entry.run.finished_at < finishedBefore) {
          byId.delete(id);
          forget(id);
          gone++;
        }
      }
      pruneEvents(finishedBefore);
      return gone;
    },
    async close() {
      byId.clear();
      unindexed = [];
    },
  };
}

/** A result recorded by a resumed run keeps what the step did before (StepRecord alone has no field for it). */
function withHistoryOf(step: StoredStep, record: StepRecord | StoredStep): StoredStep {
  const { earlier, resumed_at } = record as StoredStep;
  if (earlier === undefined && resumed_at === undefined) return step;
  return { ...step, ...(earlier !== undefined ? { earlier } : {}), ...(resumed_at !== undefined ? { resumed_at } : {}) };
}
