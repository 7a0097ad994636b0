import type BetterSqlite3 from 'better-sqlite3';
import { ToolchainError } from '../common/errors.js';
import { tooNew } from './store-error.js';

// The SQLite store's schema, as numbered migrations (migration i brings the file to version i+1,
// kept in `PRAGMA user_version`). The file is marked as ours with `PRAGMA application_id`, so
// that a database of something else is refused before anything in it is touched.

/** 'tcrs' (toolchain run store). */
export const APPLICATION_ID = 0x74637273;

const MIGRATIONS: readonly string[] = [
  // 1: runs and their step results (rowid order is creation / recording order).
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY, chain TEXT NOT NULL, chain_hash TEXT NOT NULL, input TEXT,
     status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER,
     outputs TEXT, error TEXT, owner TEXT, lease_until INTEGER, epoch INTEGER NOT NULL,
     cancel_requested INTEGER NOT NULL DEFAULT 0);
   CREATE INDEX runs_by_created ON runs (created_at);
   CREATE INDEX runs_by_status ON runs (status, created_at);
   CREATE INDEX runs_by_chain ON runs (chain, created_at);
   CREATE INDEX runs_by_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;
   CREATE TABLE steps (run_id TEXT NOT NULL, key TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, key));`,
  // 2: big outputs kept once, by the sha256 of their JSON.
  `CREATE TABLE blobs (hash TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
   ALTER TABLE steps ADD COLUMN output_blob TEXT;
   CREATE INDEX steps_by_blob ON steps (output_blob) WHERE output_blob IS NOT NULL;`,
  // 3: the queue whose workers execute a run (its reconciler lists its own running runs).
  `ALTER TABLE runs ADD COLUMN queue TEXT;
   CREATE INDEX runs_by_queue ON runs (queue, status, created_at) WHERE queue IS NOT NULL;`,
  // 4: runs that wait — their waits (sleeps, events, approvals), when to look at a parked run
  // again, and the events sent (kept by id: a repeated id is not delivered twice).
  `CREATE TABLE waits (
     id TEXT PRIMARY KEY, run_id TEXT NOT NULL, chain TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
     name TEXT, match TEXT, until INTEGER, detail TEXT, created_at INTEGER NOT NULL, outcome TEXT, resolved_at INTEGER);
   CREATE INDEX waits_by_run ON waits (run_id);
   CREATE INDEX waits_open ON waits (kind, name, created_at) WHERE outcome IS NULL;
   CREATE TABLE wakes (run_id TEXT PRIMARY KEY, wake_at INTEGER) WITHOUT ROWID;
   CREATE INDEX wakes_by_time ON wakes (wake_at) WHERE wake_at IS NOT NULL;
   CREATE TABLE events (id TEXT PRIMARY KEY, name TEXT NOT NULL, payload TEXT, at INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX events_by_time ON events (at);`,
  // 5: triggers people paused (who, when, why) and when each was last resumed, by `CHAIN#ID`.
  `CREATE TABLE trigger_controls (key TEXT PRIMARY KEY, paused_by TEXT, paused_at INTEGER, reason TEXT, resumed_at INTEGER) WITHOUT ROWID;`,
  // 6: events get their position in the order they were recorded (`seq`, never given twice:
  // AUTOINCREMENT), so that a process can read the events recorded since it last looked. The
  // table is made anew (a column cannot become the key in place); the events kept so far get
  // positions in the order they were sent.
  `CREATE TABLE events_by_seq (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, payload TEXT, at INTEGER NOT NULL);
   INSERT INTO events_by_seq (id, name, payload, at) SELECT id, name, payload, at FROM events ORDER BY at, id;
   DROP TABLE events;
   ALTER TABLE events_by_seq RENAME TO events;
   CREATE INDEX events_by_time ON events (at);
   CREATE INDEX events_by_name ON events (name, seq);`,
  // 7: a re-run's origin — the run it re-runs and the step it started from — and the re-runs of a run.
  `ALTER TABLE runs ADD COLUMN rerun_of TEXT;
   ALTER TABLE runs ADD COLUMN rerun_from TEXT;
   CREATE INDEX runs_by_origin ON runs (rerun_of, created_at) WHERE rerun_of IS NOT NULL;`,
  // 8: fewer index entries to write when a run ends. Prune finds the runs that finished before a
  // time among those created before it (runs_by_created), so runs_by_finished goes; runs_by_status
  // leaves succeeded runs out (a run that succeeds only loses its entry), which a listing of
  // succeeded runs, most of them, finds through runs_by_created or runs_by_chain instead.
  `DROP INDEX runs_by_finished;
   DROP INDEX runs_by_status;
   CREATE INDEX runs_by_status ON runs (status, created_at) WHERE status <> 'succeeded';`,
];

export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings a file to the current version, or refuses it: STORE_CORRUPT (not ours), STORE_TOO_NEW. */
export function prepareSqliteSchema(db: BetterSqlite3.Database, url: string): void {
  if (checkVersion(db, url) === SQLITE_SCHEMA_VERSION) return;
  // Another process may be migrating the same file: take the write lock, then look again.
  db.transaction(() => {
    const from = checkVersion(db, url);
    for (let v = from; v < SQLITE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

/** The file's version, after checking that it is a run store (or an empty database). */
function checkVersion(db: BetterSqlite3.Database, url: string): number {
  const appId = db.pragma('application_id', { simple: true }) as number;
  const version = db.pragma('user_version', { simple: true }) as number;
  if (appId !== APPLICATION_ID) {
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    if (appId !== 0 || version !== 0 || tables.length > 0) {
      const what = tables.length > 0 ? `an SQLite database with tables of its own: ${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''}` : 'an SQLite database of another application';
      throw new ToolchainError('STORE_CORRUPT', `${url} is not a toolchain run store (${what}); give the store a file of its own`);
    }
  }
  if (version > SQLITE_SCHEMA_VERSION) throw tooNew(url, version, SQLITE_SCHEMA_VERSION);
  return version;
}
