import type { Redis as RedisClient } from 'ioredis';
import { DUE, EVENT, OPEN_WAIT, PARK, PRUNE_EVENTS, RESOLVE } from './redis-wait-scripts.js';
import type { Script } from './redis-scripts.js';
import { runFromFields } from './redis-run.js';
import type { StoredRun } from './types.js';
import { eventRange, waitLimit, waitMatches } from './wait-codec.js';
import type { EventFilter, RecordedEvent, StoredEvent, StoredWait, WaitFilter, WaitKind, WaitOutcome, WaitRequest, WaitStore } from './wait-types.js';

// The Redis store's waits, events and parked runs (the contract is wait-types.ts; the keys and
// scripts are redis-wait-scripts.ts). Every write is one script; a listing reads the smallest
// index that holds what it asks for (a run's waits, the open waits for an event, the open waits,
// all waits), in opening order, and keeps the waits that pass the filter. Events are listed from
// the event log (of a name, or all), by position.

export interface RedisAccess {
  readonly eval: <T>(doing: string, op: 'read' | 'write', script: Script, args: readonly (string | number)[]) => Promise<T>;
  readonly command: <T>(doing: string, fn: (redis: RedisClient) => Promise<T>) => Promise<T>;
}

/** Wait ids read at once from an index while listing. */
const LIST_CHUNK = 500;
/** Events deleted by one script of prune. */
const PRUNE_CHUNK = 500;

export class RedisWaits implements WaitStore {
  constructor(
    private readonly prefix: string,
    private readonly access: RedisAccess,
  ) {}

  async openWait(runId: string, epoch: number, wait: WaitRequest, now: number): Promise<StoredWait | 'fenced'> {
    const fields: (string | number)[] = ['key', wait.key, 'kind', wait.kind];
    if (wait.name !== null) fields.push('name', wait.name);
    if (wait.match !== null) fields.push('match', JSON.stringify(wait.match));
    if (wait.until !== null) fields.push('until', wait.until);
    if (wait.detail !== null && wait.detail !== undefined) fields.push('detail', JSON.stringify(wait.detail));
    const answer = await this.access.eval<string[]>(`cannot open wait ${wait.id} of run ${runId}`, 'write', OPEN_WAIT, [runId, epoch, wait.id, now, wait.name ?? '', ...fields]);
    return answer[0] === 'fenced' ? 'fenced' : waitFromFields(answer, 1)!;
  }

  async parkRun(runId: string, epoch: number, wakeAt: number | null, waits: readonly string[], now: number): Promise<'ok' | 'fenced'> {
    return (await this.access.eval<number>(`cannot park run ${runId}`, 'write', PARK, [runId, epoch, wakeAt ?? '', now, ...waits])) === 1 ? 'ok' : 'fenced';
  }

  wakeAt(runId: string): Promise<number | null | undefined> {
    return this.access.command(`cannot read run ${runId}`, async (r) => {
      const [status, at] = await Promise.all([r.hget(`${this.prefix}run:${runId}`, 'status'), r.zscore(`${this.prefix}wakes`, runId)]);
      if (status !== 'waiting') return undefined;
      return at === null ? null : Number(at);
    });
  }

  async resolveWait(id: string, outcome: WaitOutcome, now: number): Promise<{ readonly wait: StoredWait; readonly first: boolean } | undefined> {
    const answer = await this.access.eval<string[]>(`cannot resolve wait ${id}`, 'write', RESOLVE, [id, JSON.stringify(outcome), now]);
    const wait = waitFromFields(answer, 1);
    return wait && { wait, first: answer[0] === '1' };
  }

  listWaits(filter: WaitFilter = {}): Promise<readonly StoredWait[]> {
    const p = this.prefix;
    const limit = waitLimit(filter.limit);
    if (filter.id !== undefined) {
      const id = filter.id;
      return this.access.command('cannot list waits', async (r) => {
        const wait = waitFromHash(new Map(Object.entries(await r.hgetall(`${p}wait:${id}`))));
        return wait !== undefined && waitMatches(wait, filter) ? [wait] : [];
      });
    }
    const index =
      filter.run_id !== undefined
        ? `${p}run-waits:${filter.run_id}`
        : filter.open === true && filter.name !== undefined
          ? `${p}open-named:${filter.name}`
          : filter.open === true
            ? `${p}open-waits`
            : `${p}waits`;
    return this.access.command('cannot list waits', async (r) => {
      const out: StoredWait[] = [];
      for (let from = 0; out.length < limit; from += LIST_CHUNK) {
        const ids = await r.zrange(index, from, from + LIST_CHUNK - 1);
        if (ids.length === 0) break;
        const pipeline = r.pipeline();
        for (const id of ids) pipeline.hgetall(`${p}wait:${id}`);
        for (const [error, hash] of (await pipeline.exec()) ?? []) {
          if (error) throw error;
          // A wait pruned since the index was read is empty and left out.
          const wait = waitFromHash(new Map(Object.entries(hash as Record<string, string>)));
          if (wait !== undefined && waitMatches(wait, filter) && out.length < limit) out.push(wait);
        }
        if (ids.length < LIST_CHUNK) break;
      }
      return out;
    });
  }

  async dueRuns(now: number, limit: number): Promise<readonly StoredRun[]> {
    const answer = await this.access.eval<string[][]>('cannot look for runs to wake', 'write', DUE, [now, Math.max(0, Math.floor(limit))]);
    return answer.map((fields) => runFromFields(fields)).filter((run): run is StoredRun => run !== undefined);
  }

  async recordEvent(event: StoredEvent): Promise<boolean> {
    const args = [event.id, event.name, JSON.stringify(event.payload ?? null), event.at];
    return (await this.access.eval<number>(`cannot record event ${event.id}`, 'write', EVENT, args)) === 1;
  }

  listEvents(filter: EventFilter = {}): Promise<readonly RecordedEvent[]> {
    const { after, limit } = eventRange(filter);
    const index = `${this.prefix}event-log${filter.name !== undefined ? `:${filter.name}` : ''}`;
    return this.access.command('cannot list events', async (r) => {
      const ids = filter.newest === true ? (await r.zrevrangebyscore(index, '+inf', `(${after}`, 'LIMIT', 0, limit)).reverse() : await r.zrangebyscore(index, `(${after}`, '+inf', 'LIMIT', 0, limit);
      if (ids.length === 0) return [];
      const pipeline = r.pipeline();
      for (const id of ids) pipeline.hgetall(`${this.prefix}event:${id}`);
      const out: RecordedEvent[] = [];
      for (const [error, hash] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        const h = hash as Record<string, string>;
        // An event pruned since the log was read is empty and left out.
        if (h.id === undefined || h.seq === undefined) continue;
        out.push({ seq: Number(h.seq), id: h.id, name: h.name ?? '', payload: JSON.parse(h.payload ?? 'null') as unknown, at: Number(h.at) });
      }
      return out;
    });
  }

  /** Deletes the events sent before `before`, in chunks (the waits of pruned runs go with them, redis-scripts.ts). */
  async pruneEvents(before: number): Promise<void> {
    while ((await this.access.eval<number>('cannot prune events', 'write', PRUNE_EVENTS, [before, PRUNE_CHUNK])) >= PRUNE_CHUNK);
  }
}

/** A flat HGETALL answer (`field, value, …`, from `from` on) as a wait; undefined when empty. */
function waitFromFields(fields: readonly string[], from: number): StoredWait | undefined {
  const h = new Map<string, string>();
  for (let i = from; i + 1 < fields.length; i += 2) h.set(fields[i]!, fields[i + 1]!);
  return waitFromHash(h);
}

function waitFromHash(h: ReadonlyMap<string, string>): StoredWait | undefined {
  const id = h.get('id');
  if (id === undefined) return undefined;
  const num = (field: string): number | null => (h.has(field) ? Number(h.get(field)) : null);
  const json = (field: string): unknown => (h.has(field) ? (JSON.parse(h.get(field)!) as unknown) : null);
  return {
    id,
    run_id: h.get('run_id') ?? '',
    chain: h.get('chain') ?? '',
    key: h.get('key') ?? '',
    kind: (h.get('kind') ?? 'event') as WaitKind,
    name: h.get('name') ?? null,
    match: json('match') as Record<string, unknown> | null,
    until: num('until'),
    detail: json('detail'),
    created_at: num('created_at') ?? 0,
    outcome: json('outcome') as WaitOutcome | null,
    resolved_at: num('resolved_at'),
  };
}
