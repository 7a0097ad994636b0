import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import { runCli } from '../helpers/run-cli.js';
import { POSTGRES_URL, REDIS_URL } from '../helpers/services.js';

// Hostile input, round two: a store that holds something else is refused as STORE_CORRUPT and
// left as it is; one damaged run is named, and the others are still listed; a store that refuses
// writes is STORE_WRITE_FAILED, as the docs say.

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    const value = await promise;
    await (value as RunStore | undefined)?.close?.();
    return 'opened';
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

const newRun = (id: string, now: number) => ({ id, chain: 'c', chain_hash: 'h', input: { n: 1 }, owner: 'o', lease_until: now + 1000, now });

describe('PostgreSQL', () => {
  const schema = `hostile_foreign_${process.pid}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  beforeAll(async () => {
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.invoices (id int PRIMARY KEY, total numeric)`);
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_ro CASCADE`);
    await admin.end();
  });

  it("a ?schema= holding another application's tables is STORE_CORRUPT, and nothing is created there", async () => {
    expect(await code(openStore(`${POSTGRES_URL}?schema=${schema}`))).toBe('STORE_CORRUPT');
    const tables = (await admin.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema])).rows.map((r) => r.t);
    expect(tables).toEqual(['invoices']);
  });

  it('a read-only session is STORE_WRITE_FAILED', async () => {
    const readOnly = `${POSTGRES_URL}?schema=${schema}_ro&options=${encodeURIComponent('-c default_transaction_read_only=on')}`;
    expect(await code(openStore(readOnly))).toBe('STORE_WRITE_FAILED');
  });
});

describe('Redis', () => {
  const prefix = `hostile${process.pid}:`;
  const user = `hostile_ro_${process.pid}`;
  const redis = new Redis(REDIS_URL);
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.call('ACL', 'DELUSER', user);
    redis.disconnect();
  });

  it('a prefix holding keys of something else is STORE_CORRUPT, and nothing is written', async () => {
    await redis.set(`${prefix}session:42`, 'someone else');
    expect(await code(openStore(`${REDIS_URL}?prefix=${prefix}`))).toBe('STORE_CORRUPT');
    expect(await redis.keys(`${prefix}*`)).toEqual([`${prefix}session:42`]);
    await redis.del(`${prefix}session:42`);
  });

  it('a user that may only read is STORE_WRITE_FAILED', async () => {
    await redis.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '+@read', '+@connection', '+info');
    const url = new URL(REDIS_URL);
    url.username = user;
    url.password = 'pw';
    url.search = `?prefix=${prefix}ro:`;
    expect(await code(openStore(url.toString()))).toBe('STORE_WRITE_FAILED');
  });
});

describe('SQLite: one damaged run', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolchain-corrupt-row-'));
    file = join(dir, 'runs.db');
    const store = await openStore(`sqlite:${file}`);
    const now = Date.now();
    for (const [i, id] of ['run-a', 'run-b', 'run-c'].entries()) await store.createRun(newRun(id, now + i));
    await store.close();
    const db = new Sqlite(file);
    db.prepare("UPDATE runs SET input = '{not json' WHERE id = 'run-b'").run();
    db.close();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('runs list shows the others and names the damaged one as STORE_CORRUPT', async () => {
    const out = await runCli(['runs', 'list', '--store', `sqlite:${file}`], { cwd: dir });
    expect(out.stdout).toContain('run-a');
    expect(out.stdout).toContain('run-c');
    expect(out.stdout).not.toContain('run-b');
    expect(out.stderr).toMatch(/STORE_CORRUPT .*run run-b cannot be read: its input is not JSON/);
    expect(out.code).toBe(2);
  });

  it('reading that run is STORE_CORRUPT naming it; a listing without a listener fails the same way', async () => {
    const store = await openStore(`sqlite:${file}`);
    try {
      await expect(store.getRun('run-b')).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining('run-b') });
      await expect(store.listRuns()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      const seen: string[] = [];
      const runs = await store.listRuns({ onCorrupt: (e) => seen.push(e.code) });
      expect(runs.map((r) => r.id)).toEqual(['run-c', 'run-a']);
      expect(seen).toEqual(['STORE_CORRUPT']);
    } finally {
      await store.close();
    }
  });
});
