import { listLimit, newStoredRun } from './run-codec.js';
import type { Claim, ClaimOutcome, CreateOutcome, NewRun, RunEnd, RunFilter, RunStore, StepBatch, StoredRun, StoredStep } from './types.js';

// `memory:` — the library's default store: runs live as long as the engine's process. Values are
// kept by reference, as the engine hands them over (records are never changed after they are
// made), so recording costs a map lookup and a set per step. A run changes by replacement (a new
// object each time), so a run already handed out never changes under its reader.

interface MemoryRun {
  run: StoredRun;
  readonly steps: Map<string, StoredStep>;
}

export function openMemoryStore(): RunStore {
  return new MemoryStore();
}

class MemoryStore implements RunStore {
  readonly url = 'memory:';
  // Insertion order is creation order: listing walks it backwards.
  private readonly runs = new Map<string, MemoryRun>();

  async createRun(run: NewRun): Promise<CreateOutcome> {
    const existing = this.runs.get(run.id);
    if (existing) return { created: false, run: existing.run };
    const stored = newStoredRun(run);
    this.runs.set(run.id, { run: stored, steps: new Map() });
    return { created: true, run: stored };
  }

  async claimRun(id: string, claim: Claim): Promise<ClaimOutcome> {
    const entry = this.runs.get(id);
    if (!entry || entry.run.epoch !== claim.expected_epoch) return { claimed: false, run: entry?.run };
    entry.run = {
      ...entry.run,
      status: 'running',
      owner: claim.owner,
      lease_until: claim.lease_until,
      updated_at: claim.now,
      epoch: entry.run.epoch + 1,
      cancel_requested: false,
      finished_at: null,
      outputs: null,
      error: null,
    };
    return { claimed: true, run: entry.run };
  }

  async recordSteps(batches: readonly StepBatch[]): Promise<readonly ('ok' | 'fenced')[]> {
    const results: ('ok' | 'fenced')[] = [];
    for (const batch of batches) {
      const entry = this.runs.get(batch.run_id);
      if (!entry || entry.run.epoch !== batch.epoch) {
        results.push('fenced');
        continue;
      }
      const steps = entry.steps;
      for (const step of batch.steps) if (!steps.has(step.key)) steps.set(step.key, step);
      results.push('ok');
    }
    return results;
  }

  async finishRun(id: string, epoch: number, end: RunEnd): Promise<'ok' | 'fenced'> {
    const entry = this.runs.get(id);
    if (!entry || entry.run.epoch !== epoch) return 'fenced';
    entry.run = {
      ...entry.run,
      status: end.status,
      outputs: end.outputs ?? null,
      error: end.error,
      finished_at: end.finished_at,
      updated_at: end.finished_at,
      owner: null,
      lease_until: null,
    };
    return 'ok';
  }

  async renewLease(id: string, epoch: number, leaseUntil: number, now: number): Promise<{ result: 'ok' | 'fenced'; cancel_requested: boolean }> {
    const entry = this.runs.get(id);
    if (!entry) return { result: 'fenced', cancel_requested: false };
    const run = entry.run;
    if (run.epoch !== epoch || run.status !== 'running') return { result: 'fenced', cancel_requested: run.cancel_requested };
    entry.run = { ...run, lease_until: leaseUntil, updated_at: now };
    return { result: 'ok', cancel_requested: run.cancel_requested };
  }

  async requestCancel(id: string, now: number): Promise<StoredRun | undefined> {
    const entry = this.runs.get(id);
    if (!entry) return undefined;
    if (entry.run.status === 'running' && !entry.run.cancel_requested) entry.run = { ...entry.run, cancel_requested: true, updated_at: now };
    return entry.run;
  }

  async getRun(id: string): Promise<StoredRun | undefined> {
    return this.runs.get(id)?.run;
  }

  async getSteps(id: string): Promise<readonly StoredStep[]> {
    const entry = this.runs.get(id);
    return entry ? [...entry.steps.values()] : [];
  }

  async listRuns(filter: RunFilter = {}): Promise<readonly StoredRun[]> {
    const limit = listLimit(filter.limit);
    const all = [...this.runs.values()].reverse().map((e) => e.run);
    const matching = all.filter((r) => (filter.status === undefined || r.status === filter.status) && (filter.chain === undefined || r.chain === filter.chain));
    // A stable sort keeps runs created in the same millisecond newest first.
    return matching.sort((a, b) => b.created_at - a.created_at).slice(0, limit);
  }

  async prune(finishedBefore: number): Promise<number> {
    let count = 0;
    for (const [id, { run }] of this.runs) {
      if (run.status !== 'running' && run.finished_at !== null && run.finished_at < finishedBefore) {
        this.runs.delete(id);
        count += 1;
      }
    }
    return count;
  }

  async close(): Promise<void> {
    this.runs.clear();
  }
}
