import type { Pool } from 'pg';
import { ToolchainError } from '../common/errors.js';
import { tooNew } from './store-error.js';

// The PostgreSQL store's schema, in a schema of its own (`toolchain` unless the URL says
// `?schema=NAME`), as numbered migrations; the version is kept in the table toolchain_meta.
// Several processes may open the same store at once: migrating takes a transaction-level advisory
// lock named after the schema, and looks at the version again once it holds it.

function migrations(s: string): readonly string[] {
  return [
    // 1: runs and their step results (`seq`: creation / recording order). No foreign key from
    //    steps to runs: a step is only ever added under a share lock on its run's row (postgres-sql.ts),
    //    and the key check would cost every insert (measured: a fifth of the rate).
    `CREATE TABLE ${s}.runs (
       id text PRIMARY KEY, seq bigserial NOT NULL, chain text NOT NULL, chain_hash text NOT NULL, input text,
       status text NOT NULL, created_at bigint NOT NULL, updated_at bigint NOT NULL, finished_at bigint,
       outputs text, error text, owner text, lease_until bigint, epoch integer NOT NULL,
       cancel_requested boolean NOT NULL DEFAULT false);
     CREATE INDEX runs_by_created ON ${s}.runs (created_at DESC, seq DESC);
     CREATE INDEX runs_by_status ON ${s}.runs (status, created_at DESC, seq DESC);
     CREATE INDEX runs_by_chain ON ${s}.runs (chain, created_at DESC, seq DESC);
     CREATE INDEX runs_by_finished ON ${s}.runs (finished_at) WHERE finished_at IS NOT NULL;
     CREATE TABLE ${s}.steps (
       run_id text NOT NULL, key text NOT NULL, seq bigserial NOT NULL, status text NOT NULL, record text NOT NULL,
       PRIMARY KEY (run_id, key));`,
    // 2: big outputs kept once, by the sha256 of their JSON.
    `CREATE TABLE ${s}.blobs (hash text PRIMARY KEY, value text NOT NULL);
     ALTER TABLE ${s}.steps ADD COLUMN output_blob text;
     CREATE INDEX steps_by_blob ON ${s}.steps (output_blob) WHERE output_blob IS NOT NULL;`,
    // 3: the queue whose workers execute a run (its reconciler lists its own running runs).
    `ALTER TABLE ${s}.runs ADD COLUMN queue text;
     CREATE INDEX runs_by_queue ON ${s}.runs (queue, status, created_at DESC, seq DESC) WHERE queue IS NOT NULL;`,
    // 4: runs that wait — their waits (sleeps, events, approvals; `seq`: opening order), when to
    //    look at a parked run again, and the events sent (kept by id: a repeated id is not
    //    delivered twice). No foreign keys, as for steps: a wait is only added under a share lock
    //    on its run's row (postgres-waits.ts), and prune deletes a run's waits with the run.
    `CREATE TABLE ${s}.waits (
       id text PRIMARY KEY, seq bigserial NOT NULL, run_id text NOT NULL, chain text NOT NULL, key text NOT NULL, kind text NOT NULL,
       name text, match text, until bigint, detail text, created_at bigint NOT NULL, outcome text, resolved_at bigint);
     CREATE INDEX waits_by_run ON ${s}.waits (run_id, created_at, seq);
     CREATE INDEX waits_open ON ${s}.waits (kind, name, created_at, seq) WHERE outcome IS NULL;
     CREATE INDEX waits_by_created ON ${s}.waits (created_at, seq);
     CREATE TABLE ${s}.wakes (run_id text PRIMARY KEY, wake_at bigint);
     CREATE INDEX wakes_by_time ON ${s}.wakes (wake_at) WHERE wake_at IS NOT NULL;
     CREATE TABLE ${s}.events (id text PRIMARY KEY, name text NOT NULL, payload text, at bigint NOT NULL);
     CREATE INDEX events_by_time ON ${s}.events (at);`,
    // 5: triggers people paused (who, when, why) and when each was last resumed, by `CHAIN#ID`.
    `CREATE TABLE ${s}.trigger_controls (key text PRIMARY KEY, paused_by text, paused_at bigint, reason text, resumed_at bigint);`,
    // 6: events get their position in the order they were recorded (`seq`), so that a process can
    //    read the events recorded since it last looked; the events kept so far get positions as
    //    the column is added. Recording takes a lock that orders the commits too (postgres-waits.ts).
    `ALTER TABLE ${s}.events ADD COLUMN seq bigserial NOT NULL;
     CREATE UNIQUE INDEX events_by_seq ON ${s}.events (seq);
     CREATE INDEX events_by_name ON ${s}.events (name, seq);`,
    // 7: a re-run's origin — the run it re-runs and the step it started from — and the re-runs of a run.
    `ALTER TABLE ${s}.runs ADD COLUMN rerun_of text;
     ALTER TABLE ${s}.runs ADD COLUMN rerun_from text;
     CREATE INDEX runs_by_origin ON ${s}.runs (rerun_of, created_at DESC, seq DESC) WHERE rerun_of IS NOT NULL;`,
  ];
}

export const POSTGRES_SCHEMA_VERSION = migrations('s').length;

/** Our tables: a schema holding one of them without toolchain_meta belongs to someone else. */
const OWN_TABLES = ['runs', 'steps', 'blobs', 'waits', 'wakes', 'events', 'trigger_controls'];

/** `schema` is the bare name (checked to be an identifier), `s` its quoted form. */
export async function preparePostgresSchema(pool: Pool, schema: string, url: string): Promise<void> {
  const s = quote(schema);
  try {
    const found = await pool.query<{ value: string }>(`SELECT value FROM ${s}.toolchain_meta WHERE key = 'version'`);
    const version = Number(found.rows[0]?.value ?? 0);
    if (version === POSTGRES_SCHEMA_VERSION) return;
    if (version > POSTGRES_SCHEMA_VERSION) throw tooNew(url, version, POSTGRES_SCHEMA_VERSION);
  } catch (error) {
    // 42P01 / 3F000: no table / no schema yet — a new store; anything else is the caller's to report.
    const code = (error as { code?: unknown }).code;
    if (code !== '42P01' && code !== '3F000') throw error;
  }
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`toolchain run store ${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    const tables = (await client.query<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1', [schema])).rows.map((r) => r.name);
    let version = 0;
    if (tables.includes('toolchain_meta')) {
      version = Number((await client.query<{ value: string }>(`SELECT value FROM ${s}.toolchain_meta WHERE key = 'version'`)).rows[0]?.value ?? 0);
    } else {
      // No toolchain_meta: whatever tables are there belong to something else (ours always start
      // with toolchain_meta), whether or not their names are ours. Nothing is created beside them.
      const foreign = [...tables].sort((a, b) => Number(OWN_TABLES.includes(b)) - Number(OWN_TABLES.includes(a)) || a.localeCompare(b));
      if (foreign.length > 0) {
        const shown = foreign.length > 5 ? `${foreign.slice(0, 5).join(', ')} and ${foreign.length - 5} more` : foreign.join(', ');
        throw new ToolchainError('STORE_CORRUPT', `${url} is not a toolchain run store (schema ${schema} has tables of another application: ${shown}); choose another schema with ?schema=NAME`);
      }
      await client.query(`CREATE TABLE ${s}.toolchain_meta (key text PRIMARY KEY, value text NOT NULL)`);
    }
    if (version > POSTGRES_SCHEMA_VERSION) throw tooNew(url, version, POSTGRES_SCHEMA_VERSION);
    const steps = migrations(s);
    for (let v = version; v < steps.length; v++) await client.query(steps[v]!);
    await client.query(`INSERT INTO ${s}.toolchain_meta (key, value) VALUES ('version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [String(steps.length)]);
    await client.query('COMMIT');
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => undefined); // the connection may be the thing that failed
    throw error;
  } finally {
    client.release(failure);
  }
}

/** A schema name as SQL: checked to be a plain identifier when the URL was read, quoted here. */
export function quote(identifier: string): string {
  return `"${identifier}"`;
}
