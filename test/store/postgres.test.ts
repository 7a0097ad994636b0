import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type RunStore, type StoredStep } from '../../src/store/index.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-schema.js';
import { postgresNamespace, postgresQuery, POSTGRES_URL, type Namespace } from '../fixtures/store/drivers.js';
import { startPrivatePostgres, type PrivatePostgres } from '../fixtures/store/private-postgres.js';

// What only the PostgreSQL store has: a schema that migrates, is refused when newer or someone
// else's, is set up once by engines opening it together; and a server that goes away and comes
// back (a private PostgreSQL 15 started for the test: the shared one on 5432 is never stopped).

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'store');
const T0 = 1_700_000_000_000;
const step = (key: string, output: unknown = { key }): StoredStep => ({ key, step: key, index: 0, status: 'succeeded', attempts: 1, output, started_at: T0, duration_ms: 1 });

describe('PostgreSQL store schemas', () => {
  let ns: Namespace;
  const schema = (): string => new URL(ns.url).searchParams.get('schema')!;
  afterEach(async () => {
    await ns.drop();
  });

  it('migrates a version 1 schema: its runs and steps are kept, and big outputs work', async () => {
    ns = postgresNamespace();
    await postgresQuery(readFileSync(join(FIXTURES, 'postgres-v1.sql'), 'utf8').replaceAll('{{schema}}', `"${schema()}"`));
    const store = await ns.open();
    expect(await store.getRun('old-1')).toEqual(expect.objectContaining({ status: 'succeeded', input: { question: 'Osaka?' }, outputs: { city: 'Osaka' }, finished_at: 1700000000050, queue: null, rerun_of: null, rerun_from: null }));
    expect((await store.getSteps('old-1')).map((s) => [s.key, s.output, s.attempts])).toEqual([
      ['locate', { city: 'Osaka', tz: 'Asia/Tokyo' }, 1],
      ['format', 'Osaka 14:05', 2],
    ]);
    const big = 'z'.repeat(300 * 1024);
    expect(await store.recordSteps([{ run_id: 'old-2', epoch: 1, steps: [step('big', big)] }])).toEqual(['ok']);
    expect((await store.getSteps('old-2'))[0]?.output).toBe(big);
    expect(await store.waits.openWait('old-2', 1, { id: 'w', key: 'w', kind: 'sleep', name: null, match: null, until: T0 + 5, detail: null }, T0)).toMatchObject({ run_id: 'old-2', outcome: null });
    expect(await postgresQuery(`SELECT value FROM "${schema()}".toolchain_meta`)).toEqual([{ value: String(POSTGRES_SCHEMA_VERSION) }]);
  });

  it("migrates a version 5 schema's events: each kept, given positions", async () => {
    ns = postgresNamespace();
    await (await ns.open()).close();
    // The events table as versions 4 and 5 made it, with events in it (and runs without the columns 7 adds).
    await postgresQuery(`ALTER TABLE "${schema()}".runs DROP COLUMN rerun_of, DROP COLUMN rerun_from;
      DROP TABLE "${schema()}".events;
      CREATE TABLE "${schema()}".events (id text PRIMARY KEY, name text NOT NULL, payload text, at bigint NOT NULL);
      INSERT INTO "${schema()}".events VALUES ('a', 'paid', '{"order":1}', ${T0 + 10}), ('b', 'paid', '{"order":2}', ${T0 + 20});
      UPDATE "${schema()}".toolchain_meta SET value = '5' WHERE key = 'version'`);
    const store = await ns.open();
    const kept = await store.waits.listEvents({ name: 'paid' });
    expect(kept.map((e) => e.id).sort()).toEqual(['a', 'b']);
    expect(await store.waits.recordEvent({ id: 'c', name: 'paid', payload: null, at: T0 + 30 })).toBe(true);
    const all = await store.waits.listEvents();
    expect(all.map((e) => e.id).at(-1)).toBe('c');
    expect(new Set(all.map((e) => e.seq)).size).toBe(3);
    expect(await postgresQuery(`SELECT value FROM "${schema()}".toolchain_meta`)).toEqual([{ value: String(POSTGRES_SCHEMA_VERSION) }]);
  });

  it('refuses a schema written by a newer toolchain with STORE_TOO_NEW, and leaves it alone', async () => {
    ns = postgresNamespace();
    await (await ns.open()).close();
    await postgresQuery(`UPDATE "${schema()}".toolchain_meta SET value = '99' WHERE key = 'version'`);
    await expect(openStore(ns.url)).rejects.toMatchObject({
      code: 'STORE_TOO_NEW',
      message: `${ns.url} was written by a newer toolchain (store schema version 99; this one knows versions up to ${POSTGRES_SCHEMA_VERSION}): upgrade toolchain, or use another store`,
    });
    expect(await postgresQuery(`SELECT value FROM "${schema()}".toolchain_meta`)).toEqual([{ value: '99' }]);
  });

  it("refuses a schema with another application's runs table with STORE_CORRUPT, and adds nothing to it", async () => {
    ns = postgresNamespace();
    await postgresQuery(`CREATE SCHEMA "${schema()}"; CREATE TABLE "${schema()}".runs (n int); CREATE TABLE "${schema()}".invoices (n int)`);
    await expect(openStore(ns.url)).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
      message: `${ns.url} is not a toolchain run store (schema ${schema()} has tables of another application: runs, invoices); choose another schema with ?schema=NAME`,
    });
    const tables = await postgresQuery<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema()]);
    expect(tables.map((t) => t.name)).toEqual(['invoices', 'runs']);
  });

  it('is set up once when several engines open a new schema together', async () => {
    ns = postgresNamespace();
    const stores = await Promise.all([ns.open(), ns.open(), ns.open(), ns.open()]);
    await stores[0]!.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    expect(await stores[3]!.getRun('r')).toMatchObject({ id: 'r' });
    expect(await postgresQuery(`SELECT value FROM "${schema()}".toolchain_meta`)).toEqual([{ value: String(POSTGRES_SCHEMA_VERSION) }]);
  });

  it('defaults to the schema toolchain', async () => {
    ns = postgresNamespace(); // unused: the schema is the default one, in a database of the test's own
    const database = `tc_test_db_${process.pid}`;
    await postgresQuery(`CREATE DATABASE ${database}`);
    try {
      const url = POSTGRES_URL.replace(/\/test$/, `/${database}`);
      const store = await openStore(url);
      await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
      await store.close();
      expect(await postgresQuery('SELECT id FROM toolchain.runs', [], url)).toEqual([{ id: 'r' }]);
    } finally {
      await postgresQuery(`DROP DATABASE ${database}`);
    }
  });
});

describe('PostgreSQL store waits shared by engines', () => {
  let ns: Namespace;
  afterEach(async () => {
    await ns.drop();
  });
  const newRun = (id: string) => ({ id, chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0 + 30_000, now: T0 });
  const eventWait = (id: string) => ({ id, key: id, kind: 'event' as const, name: 'paid', match: null, until: null, detail: null });

  it('of many engines resolving one wait at once, exactly one wins and all get its outcome', async () => {
    ns = postgresNamespace();
    const stores = await Promise.all([ns.open(), ns.open(), ns.open(), ns.open()]);
    await stores[0]!.createRun(newRun('r'));
    for (let w = 0; w < 10; w++) {
      await stores[0]!.waits.openWait('r', 1, eventWait(`w${w}`), T0);
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.waits.resolveWait(`w${w}`, { ok: true, value: i }, T0 + i)),
      );
      expect(outcomes.filter((o) => o?.first)).toHaveLength(1);
      const winner = outcomes.find((o) => o?.first)!.wait;
      expect(outcomes.map((o) => o?.wait)).toEqual(outcomes.map(() => winner));
      expect((await stores[3]!.waits.listWaits({ run_id: 'r', open: false })).find((x) => x.id === `w${w}`)).toEqual(winner);
    }
  });

  it('drops the wake times of runs no longer waiting as they come due', async () => {
    ns = postgresNamespace();
    const store = await ns.open();
    for (const id of ['claimed', 'parked']) {
      await store.createRun(newRun(id));
      await store.waits.parkRun(id, 1, T0 + 10, [], T0);
    }
    await store.claimRun('claimed', { owner: 'o2', lease_until: T0 + 50, now: T0 + 1, expected_epoch: 1 });
    expect((await store.waits.dueRuns(T0 + 10, 10)).map((r) => r.id)).toEqual(['parked']);
    const schema = new URL(ns.url).searchParams.get('schema')!;
    expect(await postgresQuery(`SELECT run_id FROM "${schema}".wakes ORDER BY run_id`)).toEqual([{ run_id: 'parked' }]);
  });

  it('a park and a resolve of its wait by two engines at once always leave the run due', async () => {
    ns = postgresNamespace();
    const [a, b] = await Promise.all([ns.open(), ns.open()]);
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    for (const id of ids) {
      await a!.createRun(newRun(id));
      await a!.waits.openWait(id, 1, eventWait(`${id}-w`), T0);
    }
    await Promise.all(ids.map((id, i) => Promise.all(i % 2 === 0 ? [a!.waits.parkRun(id, 1, null, [`${id}-w`], T0 + 1), b!.waits.resolveWait(`${id}-w`, { ok: true, value: i }, T0 + 2)] : [b!.waits.resolveWait(`${id}-w`, { ok: true, value: i }, T0 + 2), a!.waits.parkRun(id, 1, null, [`${id}-w`], T0 + 1)])));
    expect((await a!.waits.dueRuns(T0 + 2, 100)).map((r) => r.id).sort()).toEqual([...ids].sort());
  });
});

describe('PostgreSQL store when the server goes away', () => {
  let server: PrivatePostgres;
  const opened: RunStore[] = [];
  beforeAll(async () => {
    server = await startPrivatePostgres();
  }, 120_000);
  afterAll(async () => {
    for (const store of opened) await store.close();
    await server?.destroy();
  }, 60_000);

  async function open(schema: string, durability: 'normal' | 'full'): Promise<RunStore> {
    const store = await openStore(`${server.url}?schema=${schema}`, { durability });
    opened.push(store);
    await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    for (let i = 0; i < 5; i++) expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step(`s${i}a`), step(`s${i}b`)] }])).toEqual(['ok']);
    return store;
  }

  it('fails calls with STORE_UNAVAILABLE while it is stopped, works again once it is back, and loses nothing', async () => {
    const store = await open('stopped', 'normal');
    await server.stop('fast');
    const url = `${server.url}?schema=stopped`;
    await expect(store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }])).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(new RegExp(`^${url.replace(/[.?]/g, '\\$&')}: cannot record step results: `)),
    });
    await expect(store.getRun('r')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining(': cannot read run r: ') });
    await expect(store.finishRun('r', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await server.start();
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }])).toEqual(['ok']);
    expect((await store.getSteps('r')).map((s) => s.key)).toEqual(['s0a', 's0b', 's1a', 's1b', 's2a', 's2b', 's3a', 's3b', 's4a', 's4b', 'late']);
  }, 60_000);

  it('with durability full keeps every acknowledged record through a crash of the server', async () => {
    const store = await open('crashed', 'full');
    await server.stop('immediate');
    await server.start();
    const again = await openStore(`${server.url}?schema=crashed`);
    opened.push(again);
    expect((await again.getSteps('r')).map((s) => s.key)).toEqual(['s0a', 's0b', 's1a', 's1b', 's2a', 's2b', 's3a', 's3b', 's4a', 's4b']);
    expect((await store.getRun('r'))?.status).toBe('running');
  }, 60_000);
});
