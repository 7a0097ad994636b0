import type { PoolClient, QueryResultRow } from 'pg';
import type { Query } from './postgres-sql.js';
import { RUN_COLUMNS, runFromRow, type RunRow } from './run-codec.js';
import type { StoredRun } from './types.js';
import { EVENT_COLUMNS, eventFromRow, eventRange, WAIT_COLUMNS, waitFromRow, waitLimit, waitWhere, type EventRow, type WaitRow } from './wait-codec.js';
import type { EventFilter, RecordedEvent, StoredEvent, StoredWait, WaitFilter, WaitOutcome, WaitRequest, WaitStore } from './wait-types.js';

// The PostgreSQL store's waits, events and parked runs (the contract is wait-types.ts; the tables
// are migration 4 of postgres-schema.ts). Opening a wait and recording an event are one statement
// each; parking and resolving are short transactions that both lock the run's row first, so that
// of a park and a resolve of one run's wait, whichever comes second sees the other: a wait
// resolved before the park makes the run due at once, one resolved after it wakes the run.
// (One statement could not do that: its reads of the other table see the snapshot it started
// with, not what a transaction it waited for committed.)
//
// An event's position comes from a sequence, and a sequence gives numbers in the order they are
// asked for, not in the order their transactions commit: a reader could see event 11 committed
// while 10 is not yet, move past 10, and never see it. So recording an event first takes a
// transaction-level advisory lock of the store's: one event is recorded at a time, each
// committed before the next takes its number. Events are few next to steps; the lock costs
// nothing else.

export interface PostgresAccess {
  readonly query: <R extends QueryResultRow>(doing: string, op: 'read' | 'write', query: Query, values: unknown[]) => Promise<R[]>;
  readonly transaction: <T>(doing: string, fn: (client: PoolClient) => Promise<T>) => Promise<T>;
}

/** At most this many wake times of runs no longer waiting are dropped by one look for due runs. */
const STALE_CHUNK = 500;

function postgresWaitStatements(s: string) {
  const q = (name: string, text: string): Query => ({ name: `toolchain_${name}`, text });
  const runColumns = RUN_COLUMNS.split(', ')
    .map((c) => `r.${c}`)
    .join(', ');
  return {
    // The share lock on the run's row holds off a claim until the commit (as recording a step
    // does); an existing wait is returned as it is (the no-op update makes RETURNING give it).
    open: q(
      'open_wait',
      `WITH owned AS (SELECT id, chain FROM ${s}.runs WHERE id = $1 AND epoch = $2 FOR SHARE)
       INSERT INTO ${s}.waits AS w (id, run_id, chain, key, kind, name, match, until, detail, created_at)
       SELECT $3, owned.id, owned.chain, $4, $5, $6, $7, $8::bigint, $9, $10::bigint FROM owned
       ON CONFLICT (id) DO UPDATE SET id = w.id
       RETURNING ${WAIT_COLUMNS}`,
    ),
    wakeOf: q('wake_of_run', `SELECT r.status, w.wake_at FROM ${s}.runs r LEFT JOIN ${s}.wakes w ON w.run_id = r.id WHERE r.id = $1`),
    park: q('park_run', `UPDATE ${s}.runs SET status = 'waiting', owner = NULL, lease_until = NULL, updated_at = $3 WHERE id = $1 AND epoch = $2`),
    setWake: q(
      'set_wake',
      `INSERT INTO ${s}.wakes (run_id, wake_at)
       SELECT $1, CASE WHEN EXISTS (SELECT 1 FROM ${s}.waits WHERE id = ANY($4::text[]) AND outcome IS NOT NULL) THEN $2::bigint ELSE $3::bigint END
       ON CONFLICT (run_id) DO UPDATE SET wake_at = EXCLUDED.wake_at`,
    ),
    /** Locks the row of the wait's run (none: no such wait, or its run is gone). */
    lockRunOf: q('lock_run_of_wait', `SELECT r.id FROM ${s}.waits w JOIN ${s}.runs r ON r.id = w.run_id WHERE w.id = $1 FOR UPDATE OF r`),
    resolve: q(
      'resolve_wait',
      `WITH done AS (
         UPDATE ${s}.waits SET outcome = $2, resolved_at = $3 WHERE id = $1 AND outcome IS NULL RETURNING ${WAIT_COLUMNS}
       ), woke AS (
         INSERT INTO ${s}.wakes (run_id, wake_at)
         SELECT done.run_id, $3 FROM done JOIN ${s}.runs r ON r.id = done.run_id WHERE r.status = 'waiting'
         ON CONFLICT (run_id) DO UPDATE SET wake_at = EXCLUDED.wake_at
       )
       SELECT true AS first, ${WAIT_COLUMNS} FROM done
       UNION ALL SELECT false AS first, ${WAIT_COLUMNS} FROM ${s}.waits WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM done)`,
    ),
    // Wake times of runs that are no longer waiting (claimed, finished) are dropped as they come
    // due; a run being parked or claimed meanwhile is locked, skipped, and looked at next time.
    due: q(
      'due_runs',
      `WITH stale AS (
         DELETE FROM ${s}.wakes WHERE run_id IN (
           SELECT w.run_id FROM ${s}.wakes w JOIN ${s}.runs r ON r.id = w.run_id
           WHERE w.wake_at <= $1 AND r.status <> 'waiting' LIMIT ${STALE_CHUNK} FOR UPDATE OF w, r SKIP LOCKED)
       )
       SELECT ${runColumns} FROM ${s}.wakes w JOIN ${s}.runs r ON r.id = w.run_id
       WHERE w.wake_at <= $1 AND r.status = 'waiting' ORDER BY w.wake_at, r.id LIMIT $2`,
    ),
    eventLock: q('lock_events', 'SELECT pg_advisory_xact_lock(hashtext($1))'),
    event: q('record_event', `INSERT INTO ${s}.events (id, name, payload, at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING 1 AS added`),
    /** An event listing: after a position, of a name or all, the oldest or the newest first. */
    events: (named: boolean, newest: boolean): Query => ({
      name: `toolchain_list_events_${named ? 'named' : 'all'}_${newest ? 'newest' : 'oldest'}`,
      text: `SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE seq > $1${named ? ' AND name = $3' : ''} ORDER BY seq${newest ? ' DESC' : ''} LIMIT $2`,
    }),
    /** A listing's statement for a WHERE clause of waitWhere (its `?` numbered), then the limit. */
    list: (where: string, count: number): Query => {
      let n = 0;
      const numbered = where.replace(/\?/g, () => `$${++n}`);
      return { name: `toolchain_list_waits_${listName(where)}`, text: `SELECT ${WAIT_COLUMNS} FROM ${s}.waits ${numbered} ORDER BY created_at, seq LIMIT $${count + 1}` };
    },
    pruneEvents: `DELETE FROM ${s}.events WHERE at < $1`,
  };
}

/** A statement name for a listing's WHERE clause (its columns and openness, in waitWhere's order). */
function listName(where: string): string {
  const parts = [...where.matchAll(/\b(id|run_id|kind|name) = \?|outcome IS (NOT )?NULL/g)].map((m) => m[1] ?? (m[2] ? 'closed' : 'open'));
  return parts.length === 0 ? 'all' : parts.join('_');
}

export class PostgresWaits implements WaitStore {
  private readonly sql: ReturnType<typeof postgresWaitStatements>;
  /** The advisory lock's name: one per schema, so stores in other schemas do not wait for each other. */
  private readonly eventLockName: string;

  constructor(
    s: string,
    private readonly access: PostgresAccess,
  ) {
    this.sql = postgresWaitStatements(s);
    this.eventLockName = `toolchain events ${s}`;
  }

  async openWait(runId: string, epoch: number, wait: WaitRequest, now: number): Promise<StoredWait | 'fenced'> {
    const values = [runId, epoch, wait.id, wait.key, wait.kind, wait.name, json(wait.match), wait.until, json(wait.detail), now];
    const row = (await this.access.query<WaitRow>(`cannot open wait ${wait.id} of run ${runId}`, 'write', this.sql.open, values))[0];
    return row === undefined ? 'fenced' : waitFromRow(row);
  }

  async wakeAt(runId: string): Promise<number | null | undefined> {
    const row = (await this.access.query<{ status: string; wake_at: string | number | null }>(`cannot read run ${runId}`, 'read', this.sql.wakeOf, [runId]))[0];
    if (row?.status !== 'waiting') return undefined;
    return row.wake_at === null ? null : Number(row.wake_at);
  }

  parkRun(runId: string, epoch: number, wakeAt: number | null, waits: readonly string[], now: number): Promise<'ok' | 'fenced'> {
    return this.access.transaction(`cannot park run ${runId}`, async (client) => {
      const parked = await client.query({ ...this.sql.park, values: [runId, epoch, now] });
      if (parked.rowCount !== 1) return 'fenced';
      // A statement of its own, after the run's row is locked: it sees every resolve that held the lock before.
      await client.query({ ...this.sql.setWake, values: [runId, now, wakeAt, waits] });
      return 'ok';
    });
  }

  resolveWait(id: string, outcome: WaitOutcome, now: number): Promise<{ readonly wait: StoredWait; readonly first: boolean } | undefined> {
    return this.access.transaction(`cannot resolve wait ${id}`, async (client) => {
      await client.query({ ...this.sql.lockRunOf, values: [id] });
      const row = (await client.query<WaitRow & { first: boolean }>({ ...this.sql.resolve, values: [id, JSON.stringify(outcome), now] })).rows[0];
      return row === undefined ? undefined : { wait: waitFromRow(row), first: row.first };
    });
  }

  async listWaits(filter: WaitFilter = {}): Promise<readonly StoredWait[]> {
    const where = waitWhere(filter);
    const rows = await this.access.query<WaitRow>('cannot list waits', 'read', this.sql.list(where.sql, where.values.length), [...where.values, waitLimit(filter.limit)]);
    return rows.map(waitFromRow);
  }

  async dueRuns(now: number, limit: number): Promise<readonly StoredRun[]> {
    return (await this.access.query<RunRow>('cannot look for runs to wake', 'write', this.sql.due, [now, limit])).map(runFromRow);
  }

  recordEvent(event: StoredEvent): Promise<boolean> {
    const values = [event.id, event.name, JSON.stringify(event.payload ?? null), event.at];
    return this.access.transaction(`cannot record event ${event.id}`, async (client) => {
      await client.query({ ...this.sql.eventLock, values: [this.eventLockName] });
      return ((await client.query({ ...this.sql.event, values })).rowCount ?? 0) > 0;
    });
  }

  async listEvents(filter: EventFilter = {}): Promise<readonly RecordedEvent[]> {
    const { after, limit } = eventRange(filter);
    const named = filter.name !== undefined;
    const newest = filter.newest === true;
    const rows = await this.access.query<EventRow>('cannot list events', 'read', this.sql.events(named, newest), named ? [after, limit, filter.name] : [after, limit]);
    const events = rows.map(eventFromRow);
    return newest ? events.reverse() : events;
  }

  /** Part of prune's transaction: the events sent before `before` (the waits of pruned runs go with them, postgres-sql.ts). */
  async pruneEvents(client: PoolClient, before: number): Promise<void> {
    await client.query(this.sql.pruneEvents, [before]);
  }
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
