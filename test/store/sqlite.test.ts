import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type RunStore, type StoredStep } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/store/sqlite-schema.js';
import { NOBODY, startChild } from '../fixtures/store/spawn-child.js';

// What only the SQLite store has: a file — old ones migrate, newer ones and files of something
// else are refused, a file that cannot be written fails writes clearly and loses nothing, and
// several processes share one file.

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'store');
const T0 = 1_700_000_000_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolchain-sqlite-'));
});
afterEach(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

const step = (key: string, output: unknown = { key }): StoredStep => ({ key, step: key, index: 0, status: 'succeeded', attempts: 1, output, started_at: T0, duration_ms: 1 });

async function storeWithRun(file: string, keys: readonly string[]): Promise<RunStore> {
  const store = await openStore(`sqlite:${file}`);
  await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
  await store.recordSteps([{ run_id: 'r', epoch: 1, steps: keys.map((k) => step(k)) }]);
  return store;
}

/** The run indexes of versions 1 to 7. */
const INDEXES_BEFORE_8 = `DROP INDEX runs_by_status;
  CREATE INDEX runs_by_status ON runs (status, created_at);
  CREATE INDEX runs_by_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;`;

function pragma(file: string, name: string): unknown {
  const db = new Sqlite(file, { readonly: true });
  try {
    return db.pragma(name, { simple: true });
  } finally {
    db.close();
  }
}

describe('SQLite store files', () => {
  it('migrates a version 1 file: its runs and steps are kept, and big outputs work', async () => {
    const file = join(dir, 'runs.db');
    const db = new Sqlite(file);
    db.exec(readFileSync(join(FIXTURES, 'sqlite-v1.sql'), 'utf8'));
    db.close();
    const store = await openStore(`sqlite:${file}`);
    expect(await store.getRun('old-1')).toEqual(expect.objectContaining({ status: 'succeeded', input: { question: 'Osaka?' }, outputs: { city: 'Osaka' }, finished_at: 1700000000050, queue: null, rerun_of: null, rerun_from: null }));
    expect((await store.getSteps('old-1')).map((s) => [s.key, s.output, s.attempts])).toEqual([
      ['locate', { city: 'Osaka', tz: 'Asia/Tokyo' }, 1],
      ['format', 'Osaka 14:05', 2],
    ]);
    expect((await store.listRuns({ status: 'running' })).map((r) => r.owner)).toEqual(['host:42:n']);
    const big = 'z'.repeat(300 * 1024);
    expect(await store.recordSteps([{ run_id: 'old-2', epoch: 1, steps: [step('big', big)] }])).toEqual(['ok']);
    expect((await store.getSteps('old-2'))[0]?.output).toBe(big);
    await store.close();
    expect(pragma(file, 'user_version')).toBe(SQLITE_SCHEMA_VERSION);
  });

  it("migrates a version 5 file's events: each kept, given positions in the order they were sent", async () => {
    const file = join(dir, 'runs.db');
    await (await openStore(`sqlite:${file}`)).close();
    // The events table as versions 4 and 5 made it, with events in it (and runs without the columns 7 adds, the indexes 8 changes).
    const db = new Sqlite(file);
    db.exec(`DROP INDEX runs_by_origin; ALTER TABLE runs DROP COLUMN rerun_of; ALTER TABLE runs DROP COLUMN rerun_from;
      ${INDEXES_BEFORE_8}
      DROP TABLE events;
      CREATE TABLE events (id TEXT PRIMARY KEY, name TEXT NOT NULL, payload TEXT, at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX events_by_time ON events (at);
      INSERT INTO events VALUES ('later', 'paid', '{"order":2}', ${T0 + 20}), ('sooner', 'paid', '{"order":1}', ${T0 + 10});`);
    db.pragma('user_version = 5');
    db.close();
    const store = await openStore(`sqlite:${file}`);
    const kept = await store.waits.listEvents();
    expect(kept.map((e) => [e.id, e.payload])).toEqual([['sooner', { order: 1 }], ['later', { order: 2 }]]);
    expect(await store.waits.recordEvent({ id: 'later', name: 'paid', payload: null, at: T0 + 30 })).toBe(false);
    expect(await store.waits.recordEvent({ id: 'new', name: 'paid', payload: null, at: T0 + 30 })).toBe(true);
    const newest = (await store.waits.listEvents({ newest: true, limit: 1 }))[0]!;
    expect(newest.id).toBe('new');
    expect(newest.seq).toBeGreaterThan(kept[1]!.seq);
    await store.close();
    expect(pragma(file, 'user_version')).toBe(SQLITE_SCHEMA_VERSION);
  });

  it("migrates a version 7 file's run indexes: its runs and steps are kept, listed and pruned", async () => {
    const file = join(dir, 'runs.db');
    const made = await openStore(`sqlite:${file}`);
    for (const id of ['r1', 'r2']) await made.createRun({ id, chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    await made.recordSteps([{ run_id: 'r1', epoch: 1, steps: [step('zeta'), step('alpha')] }, { run_id: 'r2', epoch: 1, steps: [step('y')] }]);
    await made.finishRun('r2', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 5 });
    await made.close();
    const db = new Sqlite(file);
    db.exec(INDEXES_BEFORE_8);
    db.pragma('user_version = 7');
    db.close();
    const store = await openStore(`sqlite:${file}`);
    expect((await store.getSteps('r1')).map((s) => s.key)).toEqual(['zeta', 'alpha']);
    expect((await store.listRuns({ status: 'succeeded' })).map((r) => r.id)).toEqual(['r2']);
    expect((await store.listRuns({ status: 'running', chain: 'c' })).map((r) => r.id)).toEqual(['r1']);
    expect(await store.prune(T0 + 10)).toBe(1);
    expect(await store.getSteps('r2')).toEqual([]);
    expect(await store.getRun('r1')).toEqual(expect.objectContaining({ status: 'running' }));
    await store.close();
    const after = new Sqlite(file, { readonly: true });
    try {
      expect(after.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'runs' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all()).toEqual([
        'runs_by_chain',
        'runs_by_created',
        'runs_by_origin',
        'runs_by_queue',
        'runs_by_status',
      ]);
    } finally {
      after.close();
    }
    expect(pragma(file, 'user_version')).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('refuses a file written by a newer toolchain with STORE_TOO_NEW, and leaves it alone', async () => {
    const file = join(dir, 'runs.db');
    await (await storeWithRun(file, ['a'])).close();
    const db = new Sqlite(file);
    db.pragma('user_version = 99');
    db.close();
    const error = await openStore(`sqlite:${file}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_TOO_NEW' });
    expect((error as Error).message).toContain(`newer toolchain (store schema version 99; this one knows versions up to ${SQLITE_SCHEMA_VERSION})`);
    expect(pragma(file, 'user_version')).toBe(99);
  });

  it('refuses a file that is not SQLite with STORE_CORRUPT, and leaves it alone', async () => {
    const file = join(dir, 'runs.db');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(200));
    const error = await openStore(`sqlite:${file}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT' });
    expect((error as Error).message).toBe(`sqlite:${file} is not a toolchain run store (not an SQLite database); give the store a file of its own`);
    expect(readFileSync(file, 'utf8')).toBe('these are my notes, not a database\n'.repeat(200));
  });

  it('refuses an SQLite database of something else with STORE_CORRUPT, naming its tables, and leaves it alone', async () => {
    const file = join(dir, 'app.db');
    const db = new Sqlite(file);
    db.exec("CREATE TABLE users (name TEXT); CREATE TABLE orders (id INTEGER); INSERT INTO users VALUES ('ann');");
    db.close();
    const error = await openStore(`sqlite:${file}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', message: `sqlite:${file} is not a toolchain run store (an SQLite database with tables of its own: orders, users); give the store a file of its own` });
    expect(pragma(file, 'journal_mode')).toBe('delete');
    expect(pragma(file, 'user_version')).toBe(0);
  });

  it('refuses a store whose header was overwritten with STORE_CORRUPT', async () => {
    const file = join(dir, 'runs.db');
    await (await storeWithRun(file, ['a'])).close();
    const bytes = readFileSync(file);
    bytes.fill(0x41, 0, 100);
    writeFileSync(file, bytes);
    await expect(openStore(`sqlite:${file}`)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });

  it('creates the folders of a relative path, from the working directory', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const store = await openStore('sqlite:.toolchain/deep/runs.db');
      expect(store.url).toBe('sqlite:.toolchain/deep/runs.db');
      await store.close();
    } finally {
      process.chdir(cwd);
    }
    expect(pragma(join(dir, '.toolchain', 'deep', 'runs.db'), 'journal_mode')).toBe('wal');
  });

  it('uses synchronous NORMAL, and FULL for durability full', async () => {
    const file = join(dir, 'runs.db');
    const normal = (await openStore(`sqlite:${file}`)) as SqliteStore;
    const full = (await openStore(`sqlite:${file}`, { durability: 'full' })) as SqliteStore;
    // 1 = NORMAL, 2 = FULL
    expect([normal.connection.pragma('synchronous', { simple: true }), full.connection.pragma('synchronous', { simple: true })]).toEqual([1, 2]);
    await normal.close();
    await full.close();
  });
});

describe('SQLite store waits', () => {
  it('prune deletes the waits and the wake time of a pruned run', async () => {
    const file = join(dir, 'runs.db');
    const store = await storeWithRun(file, []);
    await store.waits.openWait('r', 1, { id: 'w', key: 'w', kind: 'event', name: 'paid', match: null, until: null, detail: null }, T0);
    await store.waits.parkRun('r', 1, null, ['w'], T0 + 1);
    await store.claimRun('r', { owner: 'o2', lease_until: T0 + 50, now: T0 + 2, expected_epoch: 1 });
    await store.finishRun('r', 2, { status: 'cancelled', outputs: null, error: null, finished_at: T0 + 3 });
    expect(await store.prune(T0 + 10)).toBe(1);
    await store.close();
    const db = new Sqlite(file, { readonly: true });
    try {
      expect(db.prepare('SELECT (SELECT count(*) FROM waits) AS waits, (SELECT count(*) FROM wakes) AS wakes').get()).toEqual({ waits: 0, wakes: 0 });
    } finally {
      db.close();
    }
  });
});

describe('SQLite store faults', () => {
  it('on a full disk fails the write with STORE_WRITE_FAILED, keeps what was recorded, and works again once there is room', async () => {
    const file = join(dir, 'runs.db');
    const store = await storeWithRun(file, ['a', 'b']);
    expect(store).toBeInstanceOf(SqliteStore);
    const db = (store as SqliteStore).connection;
    // The file may not grow past its current size: SQLite answers as a full disk does (SQLITE_FULL).
    db.pragma(`max_page_count = ${String(db.pragma('page_count', { simple: true }))}`);
    const batch = [{ run_id: 'r', epoch: 1, steps: ['c', 'd', 'e'].map((k) => step(k, 'x'.repeat(20_000))) }];
    const error = await store.recordSteps(batch).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_WRITE_FAILED', message: `sqlite:${file}: cannot record step results: database or disk is full (SQLITE_FULL)` });
    // The batch is one transaction: none of it was kept.
    expect((await store.getSteps('r')).map((s) => s.key)).toEqual(['a', 'b']);
    db.pragma('max_page_count = 1073741823');
    expect(await store.recordSteps(batch)).toEqual(['ok']);
    await store.close();
    const again = await openStore(`sqlite:${file}`);
    expect((await again.getSteps('r')).map((s) => s.key)).toEqual(['a', 'b', 'c', 'd', 'e']);
    await again.close();
  });

  it('on a read-only file reads, fails writes with STORE_WRITE_FAILED, and loses nothing', async () => {
    const file = join(dir, 'runs.db');
    await (await storeWithRun(file, ['a', 'b'])).close();
    chmodSync(file, 0o444);
    chmodSync(dir, 0o777); // SQLite may still make its -shm file next to it
    // root writes any file: the reader runs as nobody then.
    const as = process.getuid?.() === 0 ? NOBODY : undefined;
    const outcome = (await startChild(['read-only', `sqlite:${file}`, 'r'], { as }).result) as { run: unknown; steps: StoredStep[]; errors: unknown[] };
    expect(outcome.run).toMatchObject({ id: 'r', status: 'running' });
    expect(outcome.steps.map((s) => s.key)).toEqual(['a', 'b']);
    expect(outcome.errors).toEqual([
      { code: 'STORE_WRITE_FAILED', message: `sqlite:${file}: cannot record step results: attempt to write a readonly database (SQLITE_READONLY)` },
      { code: 'STORE_WRITE_FAILED', message: `sqlite:${file}: cannot create run another: attempt to write a readonly database (SQLITE_READONLY)` },
    ]);
    chmodSync(file, 0o644);
    const store = await openStore(`sqlite:${file}`);
    expect((await store.getSteps('r')).map((s) => s.key)).toEqual(['a', 'b']);
    await store.close();
  });

  it('in a read-only folder fails to open with STORE_WRITE_FAILED', async () => {
    const file = join(dir, 'runs.db');
    await (await storeWithRun(file, ['a'])).close();
    chmodSync(dir, 0o555);
    const as = process.getuid?.() === 0 ? NOBODY : undefined;
    const outcome = (await startChild(['open', `sqlite:${file}`], { as }).result) as { error: { code: string; message: string } };
    expect(outcome.error.code).toBe('STORE_WRITE_FAILED');
    expect(outcome.error.message).toMatch(new RegExp(`^sqlite:${file}: cannot open it: attempt to write a readonly database`));
  });
});

describe('SQLite store shared by processes', () => {
  it('of several processes creating and claiming the same runs at once, exactly one creates and one claims each', async () => {
    const url = `sqlite:${join(dir, 'shared.db')}`;
    // Made first, so that the children race on the runs rather than on creating the file.
    await (await openStore(url)).close();
    const children = [0, 1, 2].map(() => startChild(['race', url, '40']));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const outcomes = (await Promise.all(children.map((c) => c.result))) as { created: string[]; claimed: string[] }[];
    const created = outcomes.flatMap((o) => o.created).sort();
    const claimed = outcomes.flatMap((o) => o.claimed).sort();
    const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`).sort();
    expect(created).toEqual(ids);
    expect(claimed).toEqual(ids);
    const store = await openStore(url);
    expect((await store.listRuns({ limit: 100 })).map((r) => r.epoch)).toEqual(Array(40).fill(2));
    await store.close();
  });

  it('of several processes recording steps of one run at once, each step comes after every step recorded before it', async () => {
    const url = `sqlite:${join(dir, 'shared.db')}`;
    const store = await openStore(url);
    await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    const children = [0, 1, 2].map(() => startChild(['steps', url, 'r', '30']));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const outcomes = (await Promise.all(children.map((c) => c.result))) as { keys: string[] }[];
    const steps = await store.getSteps('r');
    expect(steps).toHaveLength(90);
    // The steps a writer read before it recorded one are all before that one.
    steps.forEach((s, place) => expect((s.output as { seen: number }).seen).toBeLessThanOrEqual(place));
    for (const { keys } of outcomes) expect(steps.map((s) => s.key).filter((k) => keys.includes(k))).toEqual(keys);
    await store.close();
  });
});
