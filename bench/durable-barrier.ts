// The barrier's cost: a step starts only when every result it reads is recorded. Each figure is
// taken next to a raw-store baseline in this process — the same records written the plain way,
// one INSERT and commit per step (plus the run's own row when it starts and ends), with the same
// pragmas (SQLite: WAL, synchronous NORMAL or FULL) or the same pool (PostgreSQL: 10 connections,
// synchronous_commit off or on). linear10 reads each result in the next step, so every step waits
// for one commit; fanout10's ten parallel results share one; with 32 runs in flight the commits
// are shared across runs. "Commits per run" counts the store's writes (each is one transaction,
// one disk flush at `full`), lease renewals included. Ours and the baseline take turns (one run
// each, or a block of runs each), so that a busier moment of the machine weighs on both.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { createRegistry, createSchemaCompiler } from '../src/registry/index.js';
import { openStore, type Durability, type RunStore } from '../src/store/index.js';
import { median, verdict } from './harness.js';
import { benchTools, workloads } from './executor-workloads.js';

const WRITES = new Set(['createRun', 'createRuns', 'claimRun', 'recordSteps', 'finishRun', 'renewLease', 'requestCancel']);

/** A store that counts its writes. */
function counted(store: RunStore): { store: RunStore; commits: () => number } {
  let n = 0;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (WRITES.has(String(key))) return (...args: unknown[]) => (n++, (value as (...a: unknown[]) => unknown).apply(target, args));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { store: proxy, commits: () => n };
}

/** The plain way: one statement, one commit. */
interface RawStore {
  exec(sql: string, params: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

const TABLES = [
  'CREATE TABLE IF NOT EXISTS raw_runs (id TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS raw_steps (run_id TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, key))',
];

function rawSqlite(file: string, durability: Durability): RawStore {
  const db = new Sqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  for (const sql of TABLES) db.exec(sql);
  const statements = new Map<string, Sqlite.Statement>();
  return {
    exec: async (sql, params) => {
      let s = statements.get(sql);
      if (s === undefined) statements.set(sql, (s = db.prepare(sql)));
      return s.run(...params);
    },
    close: async () => void db.close(),
  };
}

async function rawPostgres(url: string, schema: string, durability: Durability): Promise<RawStore> {
  const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c synchronous_commit=${durability === 'full' ? 'on' : 'off'} -c search_path=${schema}` });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  for (const sql of TABLES) await pool.query(sql.replaceAll('TEXT', 'text'));
  return {
    exec: (sql, params) => pool.query(sql.replace(/\?/g, (() => { let i = 0; return () => `$${++i}`; })()), params),
    close: () => pool.end(),
  };
}

let rawIds = 0;
/** One run of `steps` steps the plain way; `parallel` of them (a fan-out) at once after the first. */
async function rawRun(raw: RawStore, steps: number, fan: boolean): Promise<void> {
  const id = `raw-${process.pid}-${rawIds++}`;
  const body = JSON.stringify({ n: 0 });
  await raw.exec('INSERT INTO raw_runs (id, body, status) VALUES (?, ?, ?)', [id, body, 'running']);
  // A step's record as a durable engine keeps it (what ran, how it went, when), not just its output.
  const record = (k: number): string => JSON.stringify({ key: `s${k}`, step: `s${k}`, index: k, status: 'succeeded', attempts: 1, output: { n: k + 1 }, started_at: Date.now(), duration_ms: 0 });
  const step = (k: number): Promise<unknown> => raw.exec('INSERT INTO raw_steps (run_id, key, body) VALUES (?, ?, ?)', [id, `s${k}`, record(k)]);
  if (fan) {
    await step(0);
    await Promise.all(Array.from({ length: steps - 2 }, (_, k) => step(k + 1)));
    await step(steps - 1);
  } else for (let k = 0; k < steps; k++) await step(k);
  await raw.exec('UPDATE raw_runs SET status = ? WHERE id = ?', ['succeeded', id]);
}

interface Measured {
  readonly latency: number;
  readonly perSecond: number;
  /** Commits per run, one at a time and with `inFlight` at once. */
  readonly alone: number;
  readonly together: number;
}

/** Runs per second of `total` runs, `inFlight` at once. */
async function rate(run: () => Promise<void>, inFlight: number, total: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next++ < total) await run();
  }));
  return (total / (performance.now() - start)) * 1000;
}

/**
 * Ours and the raw baseline side by side, taking turns so that a busier moment of the machine
 * weighs on both: the median milliseconds of one run at a time (one of each in turn), and the
 * median rate with `inFlight` at once over three blocks of each in turn; commits per run of ours.
 */
async function measure(
  ours: () => Promise<void>,
  raw: () => Promise<void>,
  rounds: number,
  inFlight: number,
  total: number,
  commits: () => number,
): Promise<{ ours: Measured; raw: Measured }> {
  // Warmed up as measured, one at a time and many in flight, until the JIT has compiled both paths.
  for (let i = 0; i < rounds; i++) {
    await ours();
    await raw();
  }
  await rate(ours, inFlight, Math.ceil(total / 3));
  await rate(raw, inFlight, Math.ceil(total / 3));
  const samples: number[][] = [[], []];
  let alone = 0;
  for (let i = 0; i < rounds; i++) {
    const before = commits();
    let t = performance.now();
    await ours();
    samples[0]!.push(performance.now() - t);
    alone += commits() - before;
    t = performance.now();
    await raw();
    samples[1]!.push(performance.now() - t);
  }
  const rates: number[][] = [[], []];
  let together = 0;
  const block = Math.ceil(total / 3);
  for (let b = 0; b < 3; b++) {
    const before = commits();
    rates[0]!.push(await rate(ours, inFlight, block));
    together += commits() - before;
    rates[1]!.push(await rate(raw, inFlight, block));
  }
  const side = (k: 0 | 1): Measured => ({ latency: median(samples[k]!), perSecond: median(rates[k]!), alone: alone / rounds, together: together / (block * 3) });
  return { ours: side(0), raw: side(1) };
}

export interface BarrierCase {
  readonly label: string;
  readonly store: string;
  readonly durability: Durability;
  readonly raw: () => Promise<RawStore>;
  readonly rounds: number;
  /** Throughput with 32 in flight must be at least twice the raw baseline's. */
  readonly throughputTarget: boolean;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

export async function barrierLines(c: BarrierCase): Promise<string[]> {
  const opened = counted(await openStore(c.store, { durability: c.durability }));
  const engine: Engine = await createEngine({ cache: 'off', store: opened.store, durability: c.durability });
  for (const tool of benchTools) engine.registerTool(tool);
  engine.addChain(workloads.linear10().yaml);
  engine.addChain(workloads.fanout(10, 'inc', 'fanout10').yaml);
  const raw = await c.raw();
  const lines: string[] = [];
  try {
    const ours = (chain: string) => async (): Promise<void> => {
      const result = await engine.run(chain, { n: 0 });
      if (result.status !== 'succeeded') throw new Error(`${chain} failed: ${JSON.stringify(result.error)}`);
    };
    const total = c.rounds * 2;
    const { ours: lin, raw: rawLin } = await measure(ours('linear10'), () => rawRun(raw, 10, false), c.rounds, 32, total, opened.commits);
    const { ours: fan, raw: rawFan } = await measure(ours('fanout10'), () => rawRun(raw, 12, true), c.rounds, 32, total, opened.commits);
    const linRatio = lin.latency / rawLin.latency;
    const fanRatio = fan.latency / rawFan.latency;
    lines.push(
      `${c.label}, linear10 one at a time: ${(lin.latency * 100).toFixed(1)} µs per step (${lin.latency.toFixed(3)} ms a run); raw one commit per step ${(rawLin.latency * 100).toFixed(1)} µs (ratio ${linRatio.toFixed(2)}, target ≤ 1.3) ${verdict(linRatio <= 1.3)}`,
      `${c.label}, fanout10 one at a time: ${((fan.latency / 12) * 1000).toFixed(1)} µs per step (${fan.latency.toFixed(3)} ms a run, 12 steps); raw ${((rawFan.latency / 12) * 1000).toFixed(1)} µs (ratio ${fanRatio.toFixed(2)}, target below linear10's ${linRatio.toFixed(2)}) ${verdict(fanRatio < linRatio)}`,
      `${c.label}, 32 runs in flight: linear10 ${fmt(lin.perSecond * 10)} steps/s, raw ${fmt(rawLin.perSecond * 10)} (ratio ${(lin.perSecond / rawLin.perSecond).toFixed(2)}${c.throughputTarget ? `, target ≥ 2) ${verdict(lin.perSecond >= 2 * rawLin.perSecond)}` : ')'}; fanout10 ${fmt(fan.perSecond * 12)} steps/s, raw ${fmt(rawFan.perSecond * 12)}`,
      `${c.label}, commits per run (one disk flush each at full), one at a time / 32 in flight: linear10 ${lin.alone.toFixed(2)} / ${lin.together.toFixed(2)}, fanout10 ${fan.alone.toFixed(2)} / ${fan.together.toFixed(2)}; raw 12 and 14`,
    );
  } finally {
    await engine.close();
    await opened.store.close();
    await raw.close();
  }
  return lines;
}

/**
 * A run whose process was killed (its owner names a process that no longer exists) waits on the
 * store with five of its ten steps recorded; the time from creating an engine with `recover: true`
 * (what serve and watch do) until the run has finished, with no caller.
 */
export async function recoveryLine(store: string, dir: string): Promise<string> {
  const chains = join(dir, 'recover-chains');
  mkdirSync(chains, { recursive: true });
  const yaml = workloads.linear10().yaml;
  writeFileSync(join(chains, 'linear10.yaml'), yaml);
  const probe = await createEngine({ cache: 'off' });
  const hash = probe.addChain(yaml, join(chains, 'linear10.yaml')).hash;
  await probe.close();
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const s = await openStore(store);
    const id = `killed-${process.pid}-${round}`;
    const now = Date.now();
    const { run } = await s.createRun({ id, chain: 'linear10', chain_hash: hash, input: { n: 0 }, owner: `${hostname()}:${dead}:0000`, lease_until: now + 60_000, now });
    const steps = Array.from({ length: 5 }, (_, k) => ({ key: `s${k}`, step: `s${k}`, index: k, status: 'succeeded' as const, attempts: 1, output: { n: k + 1 }, started_at: now, duration_ms: 0 }));
    await s.recordSteps([{ run_id: id, epoch: run.epoch, steps }]);
    await s.close();
    const registry = createRegistry({ load: 'eager', schemas: createSchemaCompiler({}) });
    for (const tool of benchTools) registry.register(tool);
    const start = performance.now();
    let engine: Engine | undefined;
    const done = new Promise<void>((resolve, reject) => {
      void createEngine({ cache: 'off', registry, chainsDir: chains, store, recover: true, onRecovery: (e) => {
        if (e.type === 'recovery:finished' && e.run_id === id) return e.status === 'succeeded' ? resolve() : reject(new Error(JSON.stringify(e)));
        if (e.type === 'recovery:refused') reject(new Error(e.message));
      } }).then((made) => (engine = made));
    });
    await done;
    samples.push(performance.now() - start);
    await engine?.close();
  }
  const ms = median(samples);
  return `recovery: a killed run finished ${ms.toFixed(1)} ms after an engine with recover: true was created (target ≤ 2,000 ms) ${verdict(ms <= 2000)}`;
}

export { rawPostgres, rawSqlite };
