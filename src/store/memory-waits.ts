import type { Entry } from './memory-entry.js';
import type { StoredRun } from './types.js';
import { eventRange, waitLimit, waitMatches } from './wait-codec.js';
import type { RecordedEvent, StoredWait, WaitStore } from './wait-types.js';

// The memory store's waits, events and parked runs (see wait-types.ts for the contract). Waits are
// kept by id in creation order; a parked run's wake time is in a Map of waiting runs only, so
// looking for due runs reads those and nothing else. Events are kept by id and in a list in
// recording order (their positions ascending), which a listing searches by halves.

export function memoryWaits(find: (id: string) => Entry | undefined): WaitStore & { forget(runId: string): void; pruneEvents(before: number): void } {
  const waits = new Map<string, StoredWait>();
  const byRun = new Map<string, Set<string>>();
  const wakes = new Map<string, number | null>();
  const events = new Map<string, RecordedEvent>();
  let log: RecordedEvent[] = [];
  let lastSeq = 0;

  const copy = (run: StoredRun): StoredRun => ({ ...run });

  return {
    async openWait(runId, epoch, wait, now) {
      const entry = find(runId);
      if (entry === undefined || entry.run.epoch !== epoch) return 'fenced';
      const existing = waits.get(wait.id);
      if (existing !== undefined) return existing;
      const stored: StoredWait = { ...wait, run_id: runId, chain: entry.run.chain, created_at: now, outcome: null, resolved_at: null };
      waits.set(wait.id, stored);
      let ids = byRun.get(runId);
      if (ids === undefined) byRun.set(runId, (ids = new Set()));
      ids.add(wait.id);
      return stored;
    },
    async parkRun(runId, epoch, wakeAt, parkedOn, now) {
      const entry = find(runId);
      if (entry === undefined || entry.run.epoch !== epoch) return 'fenced';
      Object.assign(entry.run, { status: 'waiting', owner: null, lease_until: null, updated_at: now });
      wakes.set(runId, parkedOn.some((id) => (waits.get(id)?.outcome ?? null) !== null) ? now : wakeAt);
      return 'ok';
    },
    async wakeAt(runId) {
      return find(runId)?.run.status === 'waiting' ? (wakes.get(runId) ?? null) : undefined;
    },
    async resolveWait(id, outcome, now) {
      const wait = waits.get(id);
      if (wait === undefined) return undefined;
      if (wait.outcome !== null) return { wait, first: false };
      const resolved: StoredWait = { ...wait, outcome, resolved_at: now };
      waits.set(id, resolved);
      if (find(wait.run_id)?.run.status === 'waiting') wakes.set(wait.run_id, now);
      return { wait: resolved, first: true };
    },
    async listWaits(filter = {}) {
      const limit = waitLimit(filter.limit);
      const out: StoredWait[] = [];
      for (const wait of waits.values()) {
        if (!waitMatches(wait, filter)) continue;
        out.push(wait);
        if (out.length >= limit) break;
      }
      return out;
    },
    async dueRuns(now, limit) {
      const due: [number, StoredRun][] = [];
      for (const [runId, at] of wakes) {
        const run = find(runId)?.run;
        if (run === undefined || run.status !== 'waiting') {
          wakes.delete(runId);
          continue;
        }
        if (at !== null && at <= now) due.push([at, run]);
      }
      return due
        .sort((a, b) => a[0] - b[0])
        .slice(0, limit)
        .map(([, run]) => copy(run));
    },
    async recordEvent(event) {
      if (events.has(event.id)) return false;
      const recorded: RecordedEvent = { seq: ++lastSeq, id: event.id, name: event.name, payload: event.payload, at: event.at };
      events.set(event.id, recorded);
      log.push(recorded);
      return true;
    },
    async listEvents(filter = {}) {
      const { after, limit } = eventRange(filter);
      // The first event after `after`: positions ascend along the list.
      let lo = 0;
      let hi = log.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (log[mid]!.seq <= after) lo = mid + 1;
        else hi = mid;
      }
      const out: RecordedEvent[] = [];
      const wanted = (e: RecordedEvent): boolean => filter.name === undefined || e.name === filter.name;
      if (filter.newest === true) {
        for (let i = log.length - 1; i >= lo && out.length < limit; i--) if (wanted(log[i]!)) out.push({ ...log[i]! });
        return out.reverse();
      }
      for (let i = lo; i < log.length && out.length < limit; i++) if (wanted(log[i]!)) out.push({ ...log[i]! });
      return out;
    },
    forget(runId) {
      for (const id of byRun.get(runId) ?? []) waits.delete(id);
      byRun.delete(runId);
      wakes.delete(runId);
    },
    pruneEvents(before) {
      for (const [id, event] of events) if (event.at < before) events.delete(id);
      log = log.filter((e) => events.get(e.id) === e);
    },
  };
}
