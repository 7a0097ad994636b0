// Raw run-store write throughput, per driver, next to a hand-written baseline of the
// same insert with the bare database library in this process: one step result per commit, ten per
// commit, and (PostgreSQL, Redis) eight writers at once. The engine's group commit turns many
// steps into one recordSteps call; the gap between the 1-per-call and 10-per-call figures is the
// headroom it has. PostgreSQL and Redis are the services on 127.0.0.1 (a schema / key prefix of the
// bench's own, removed afterwards); SQLite is a temporary file. The `full` figures wait for the
// disk to sync each commit, and vary with whatever else the machine's disk is doing.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore, type Durability, type RunStore, type StoredStep } from '../src/store/index.js';
import { median, runIfMain, type BenchResult } from './harness.js';

const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = 'redis://127.0.0.1:6379';
const WRITERS = 8;

const record = (key: string): StoredStep => ({ key, step: 'locate', index: 3, status: 'succeeded', attempts: 1, output: { city: 'Osaka', tz: 'Asia/Tokyo', population: 2_752_412 }, started_at: 1_700_000_000_000, duration_ms: 12 });
const recordJson = (key: string): string => JSON.stringify(record(key));

/** Steps per second of `writers` loops sharing `steps` steps, `batch` steps per call. */
async function rate(steps: number, batch: number, writers: number, call: (writer: number, keys: string[]) => Promise<unknown>): Promise<number> {
  let next = 0;
  const loop = async (writer: number): Promise<void> => {
    while (next < steps) {
      const keys = Array.from({ length: batch }, (_, j) => `s${next + j}`);
      next += batch;
      await call(writer, keys);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
  return (steps / (performance.now() - start)) * 1000;
}

interface Case {
  readonly label: string;
  readonly steps: number;
  readonly batch: number;
  readonly writers: number;
}

/**
 * The store's recordSteps against `baseline`, one line per case: each measured three times, store
 * and baseline taking turns (the machine's load drifts), after a warm-up of both; medians shown.
 */
async function compare(name: string, store: RunStore, cases: readonly Case[], baseline: (c: Case, run: number) => (writer: number, keys: string[]) => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  let runs = 0;
  const storeRate = async (c: Case, steps: number): Promise<number> => {
    const ids = Array.from({ length: c.writers }, () => `bench-${runs++}`);
    for (const id of ids) await store.createRun({ id, chain: 'bench', chain_hash: 'h', input: {}, owner: 'bench', lease_until: Date.now() + 60_000, now: Date.now() });
    return rate(steps, c.batch, c.writers, (w, keys) => store.recordSteps([{ run_id: ids[w]!, epoch: 1, steps: keys.map(record) }]));
  };
  const baseRate = (c: Case, steps: number): Promise<number> => rate(steps, c.batch, c.writers, baseline(c, runs++));
  for (const c of cases) {
    const warm = Math.max(c.batch * c.writers, Math.floor(c.steps / 10));
    await storeRate(c, warm);
    await baseRate(c, warm);
    const ours: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 3; i++) {
      ours.push(await storeRate(c, c.steps));
      bare.push(await baseRate(c, c.steps));
    }
    const [o, b] = [median(ours), median(bare)];
    lines.push(`${name} ${c.label}: ${fmt(o)} steps/s, bare driver ${fmt(b)} steps/s (ratio ${(o / b).toFixed(2)})`);
  }
  return lines;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

const CASES = (steps: number, parallel: boolean): Case[] => [
  { label: '1 step per commit', steps, batch: 1, writers: 1 },
  { label: '10 steps per commit', steps: steps * 4, batch: 10, writers: 1 },
  ...(parallel ? [{ label: `${WRITERS} writers, 1 step per commit`, steps: steps * 2, batch: 1, writers: WRITERS }] : []),
];

async function memoryLines(): Promise<string[]> {
  const store = await openStore('memory:');
  return compare('memory', store, CASES(200_000, false), () => {
    const map = new Map<string, unknown>(); // one run's steps
    return async (_w, keys) => {
      for (const k of keys) if (!map.has(k)) map.set(k, record(k));
    };
  });
}

async function sqliteLines(durability: Durability, steps: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolchain-bench-store-'));
  try {
    const store = await openStore(`sqlite:${join(dir, 'runs.db')}`, { durability });
    const db = new Sqlite(join(dir, 'bare.db'));
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    db.exec('CREATE TABLE steps (run_id TEXT NOT NULL, key TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, key))');
    const insert = db.prepare('INSERT INTO steps VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
    const many = db.transaction((run: string, keys: string[]) => {
      for (const k of keys) insert.run(run, k, recordJson(k));
    });
    const lines = await compare(`sqlite (${durability})`, store, CASES(steps, false), (_c, run) => async (_w, keys) => many.immediate(`b${run}`, keys));
    await store.close();
    db.close();
    return lines;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresLines(durability: Durability, steps: number): Promise<string[]> {
  const schema = `tc_bench_${process.pid}`;
  const pool = new pg.Pool({ connectionString: POSTGRES, max: 10, options: `-c synchronous_commit=${durability === 'full' ? 'on' : 'off'}` });
  await pool.query(`CREATE TABLE ${schema}_bare (run_id text NOT NULL, key text NOT NULL, record text NOT NULL, PRIMARY KEY (run_id, key))`);
  const store = await openStore(`${POSTGRES}?schema=${schema}`, { durability });
  try {
    return await compare(`postgres (${durability})`, store, CASES(steps, true), (_c, run) => async (w, keys) => {
      const values = keys.flatMap((k) => [`b${run}-${w}`, k, recordJson(k)]);
      const rows = keys.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`).join(', ');
      await pool.query(`INSERT INTO ${schema}_bare VALUES ${rows} ON CONFLICT DO NOTHING`, values);
    });
  } finally {
    await store.close();
    await pool.query(`DROP TABLE ${schema}_bare; DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  }
}

async function redisLines(steps: number): Promise<string[]> {
  const prefix = `tc-bench-${process.pid}:`;
  const redis = new Redis(REDIS);
  const store = await openStore(`${REDIS}?prefix=${prefix}`);
  try {
    return await compare('redis', store, CASES(steps, true), (_c, run) => async (w, keys) => {
      const multi = redis.multi();
      for (const k of keys) multi.hsetnx(`${prefix}bare:${run}-${w}`, k, recordJson(k));
      await multi.exec();
    });
  } finally {
    await store.close();
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    redis.disconnect();
  }
}

export async function benchStore(): Promise<BenchResult> {
  const lines = [
    ...(await memoryLines()),
    ...(await sqliteLines('normal', 3_000)),
    ...(await sqliteLines('full', 150)),
    ...(await postgresLines('normal', 1_500)),
    ...(await postgresLines('full', 400)),
    ...(await redisLines(3_000)),
  ];
  return { name: 'run store: recordSteps throughput', lines };
}

await runIfMain(import.meta.url, benchStore);
