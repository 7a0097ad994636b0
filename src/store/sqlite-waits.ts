import type BetterSqlite3 from 'better-sqlite3';
import { RUN_COLUMNS, runFromRow, type RunRow } from './run-codec.js';
import type { StoredRun } from './types.js';
import { EVENT_COLUMNS, eventFromRow, eventRange, WAIT_COLUMNS, waitFromRow, waitLimit, waitWhere, type EventRow, type WaitRow } from './wait-codec.js';
import type { EventFilter, RecordedEvent, StoredEvent, StoredWait, WaitFilter, WaitOutcome, WaitRequest, WaitStore } from './wait-types.js';

// The SQLite store's waits, events and parked runs (the contract is wait-types.ts; the tables are
// migrations 4 and 5 of sqlite-schema.ts). Each operation is one transaction; a parked run's wake time
// is a row of `wakes`, read through its index by the processes that wake runs. An event's
// position is its rowid: the file has one writer at a time, so positions are given in the order
// the events are committed.


export interface SqliteAccess {
  readonly write: <T>(doing: string, fn: () => T) => Promise<T>;
  readonly read: <T>(doing: string, fn: () => T) => Promise<T>;
}

export class SqliteWaits implements WaitStore {
  private readonly openTx: (runId: string, epoch: number, wait: WaitRequest, now: number) => StoredWait | 'fenced';
  private readonly parkTx: (runId: string, epoch: number, wakeAt: number | null, waits: readonly string[], now: number) => 'ok' | 'fenced';
  private readonly wakeOf: BetterSqlite3.Statement<[string], { status: string; wake_at: number | null }>;
  private readonly resolveTx: (id: string, outcome: WaitOutcome, now: number) => { wait: StoredWait; first: boolean } | undefined;
  private readonly dueTx: (now: number, limit: number) => StoredRun[];
  private readonly lists = new Map<string, BetterSqlite3.Statement<unknown[], WaitRow>>();
  private readonly insertEvent: BetterSqlite3.Statement;
  private readonly eventLists = new Map<string, BetterSqlite3.Statement<unknown[], EventRow>>();
  /** Part of prune's transaction: the waits and wake times of runs that are gone. */
  readonly pruneWaits: { run(): void };
  readonly pruneEvents: BetterSqlite3.Statement;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly access: SqliteAccess,
  ) {
    const wait = db.prepare<[string], WaitRow>(`SELECT ${WAIT_COLUMNS} FROM waits WHERE id = ?`);
    const runOf = db.prepare<[string, number], { chain: string }>('SELECT chain FROM runs WHERE id = ? AND epoch = ?');
    const insert = db.prepare(`INSERT INTO waits (${WAIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT (id) DO NOTHING`);
    const park = db.prepare("UPDATE runs SET status = 'waiting', owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND epoch = ?");
    const resolved = db.prepare<[string], number>('SELECT 1 FROM waits WHERE id = ? AND outcome IS NOT NULL').pluck();
    this.wakeOf = db.prepare<[string], { status: string; wake_at: number | null }>('SELECT runs.status, wakes.wake_at FROM runs LEFT JOIN wakes ON wakes.run_id = runs.id WHERE runs.id = ?');
    const setWake = db.prepare('INSERT INTO wakes (run_id, wake_at) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET wake_at = excluded.wake_at');
    const resolve = db.prepare('UPDATE waits SET outcome = ?, resolved_at = ? WHERE id = ? AND outcome IS NULL');
    const wakeNow = db.prepare("UPDATE wakes SET wake_at = ? WHERE run_id = ? AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = 'waiting')");
    const due = db.prepare<[number, number], RunRow>(
      `SELECT ${RUN_COLUMNS.split(', ').map((c) => `runs.${c}`).join(', ')} FROM wakes JOIN runs ON runs.id = wakes.run_id
         WHERE wakes.wake_at <= ? AND runs.status = 'waiting' ORDER BY wakes.wake_at LIMIT ?`,
    );
    // Wake times of runs that are no longer waiting (claimed, finished, gone) are dropped as they come due.
    const dropStale = db.prepare("DELETE FROM wakes WHERE wake_at <= ? AND run_id NOT IN (SELECT id FROM runs WHERE status = 'waiting')");
    this.insertEvent = db.prepare('INSERT INTO events (id, name, payload, at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
    const pruneWaits = db.prepare('DELETE FROM waits WHERE run_id NOT IN (SELECT id FROM runs)');
    // A pruned run's wake time would stay otherwise when it is null (dropStale drops only those that come due).
    const pruneWakes = db.prepare('DELETE FROM wakes WHERE run_id NOT IN (SELECT id FROM runs)');
    this.pruneWaits = {
      run: () => {
        pruneWaits.run();
        pruneWakes.run();
      },
    };
    this.pruneEvents = db.prepare('DELETE FROM events WHERE at < ?');

    this.openTx = db.transaction((runId: string, epoch: number, w: WaitRequest, now: number) => {
      const run = runOf.get(runId, epoch);
      if (run === undefined) return 'fenced' as const;
      insert.run(w.id, runId, run.chain, w.key, w.kind, w.name, json(w.match), w.until, json(w.detail), now);
      return waitFromRow(wait.get(w.id)!);
    }).immediate;
    this.parkTx = db.transaction((runId: string, epoch: number, wakeAt: number | null, parkedOn: readonly string[], now: number) => {
      if (park.run(now, runId, epoch).changes === 0) return 'fenced' as const;
      setWake.run(runId, parkedOn.some((id) => resolved.get(id) === 1) ? now : wakeAt);
      return 'ok' as const;
    }).immediate;
    this.resolveTx = db.transaction((id: string, outcome: WaitOutcome, now: number) => {
      const before = wait.get(id);
      if (before === undefined) return undefined;
      if (resolve.run(JSON.stringify(outcome), now, id).changes === 0) return { wait: waitFromRow(before), first: false };
      wakeNow.run(now, before.run_id, before.run_id);
      return { wait: waitFromRow(wait.get(id)!), first: true };
    }).immediate;
    this.dueTx = db.transaction((now: number, limit: number) => {
      dropStale.run(now);
      return due.all(now, limit).map(runFromRow);
    }).immediate;
  }

  openWait(runId: string, epoch: number, wait: WaitRequest, now: number): Promise<StoredWait | 'fenced'> {
    return this.access.write(`cannot open wait ${wait.id} of run ${runId}`, () => this.openTx(runId, epoch, wait, now));
  }

  parkRun(runId: string, epoch: number, wakeAt: number | null, waits: readonly string[], now: number): Promise<'ok' | 'fenced'> {
    return this.access.write(`cannot park run ${runId}`, () => this.parkTx(runId, epoch, wakeAt, waits, now));
  }

  wakeAt(runId: string): Promise<number | null | undefined> {
    return this.access.read(`cannot read run ${runId}`, () => {
      const row = this.wakeOf.get(runId);
      return row?.status === 'waiting' ? row.wake_at : undefined;
    });
  }

  resolveWait(id: string, outcome: WaitOutcome, now: number): Promise<{ readonly wait: StoredWait; readonly first: boolean } | undefined> {
    return this.access.write(`cannot resolve wait ${id}`, () => this.resolveTx(id, outcome, now));
  }

  listWaits(filter: WaitFilter = {}): Promise<readonly StoredWait[]> {
    return this.access.read('cannot list waits', () => {
      const where = waitWhere(filter);
      let statement = this.lists.get(where.sql);
      if (statement === undefined) {
        statement = this.db.prepare<unknown[], WaitRow>(`SELECT ${WAIT_COLUMNS} FROM waits ${where.sql} ORDER BY created_at, rowid LIMIT ?`);
        this.lists.set(where.sql, statement);
      }
      return statement.all(...where.values, waitLimit(filter.limit)).map(waitFromRow);
    });
  }

  dueRuns(now: number, limit: number): Promise<readonly StoredRun[]> {
    return this.access.write('cannot look for runs to wake', () => this.dueTx(now, limit));
  }

  recordEvent(event: StoredEvent): Promise<boolean> {
    return this.access.write(`cannot record event ${event.id}`, () => this.insertEvent.run(event.id, event.name, JSON.stringify(event.payload ?? null), event.at).changes > 0);
  }

  listEvents(filter: EventFilter = {}): Promise<readonly RecordedEvent[]> {
    return this.access.read('cannot list events', () => {
      const { after, limit } = eventRange(filter);
      const named = filter.name !== undefined;
      const newest = filter.newest === true;
      const key = `${named ? 'named' : 'all'} ${newest ? 'newest' : 'oldest'}`;
      let statement = this.eventLists.get(key);
      if (statement === undefined) {
        statement = this.db.prepare<unknown[], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE seq > ?${named ? ' AND name = ?' : ''} ORDER BY seq${newest ? ' DESC' : ''} LIMIT ?`);
        this.eventLists.set(key, statement);
      }
      const rows = statement.all(...(named ? [after, filter.name] : [after]), limit).map(eventFromRow);
      return newest ? rows.reverse() : rows;
    });
  }
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

