// Durable-run figures, each next to the same work with the memory store in this
// process: linear10 steps/s with SQLite (synchronous NORMAL; target ≥ 5,000 steps/s in one
// process), with PostgreSQL and 8 runs in parallel (target ≥ 1,000 steps/s), and the time a
// resume of a 1,000-step run with 999 recorded steps takes until its last step starts (target
// ≤ 100 ms), and how soon a queued run whose worker was killed goes on (durable-queue.ts).
// PostgreSQL is the service on 127.0.0.1 (a schema of the bench's own, dropped after).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { median, runIfMain, verdict, type BenchResult } from './harness.js';
import { benchTools, workloads } from './executor-workloads.js';
import { barrierLines, rawPostgres, rawSqlite, recoveryLine } from './durable-barrier.js';
import { queueTakeoverLines } from './durable-queue.js';

const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

async function engineWith(store: string): Promise<Engine> {
  const engine = await createEngine({ cache: 'off', store });
  for (const tool of benchTools) engine.registerTool(tool);
  engine.addChain(workloads.linear10().yaml);
  return engine;
}

/** Steps per second of `total` linear10 runs, `parallel` at a time. */
async function stepsPerSecond(engine: Engine, total: number, parallel: number): Promise<number> {
  let next = 0;
  const loop = async (): Promise<void> => {
    while (next++ < total) {
      const result = await engine.run('linear10', { n: 0 });
      if (result.status !== 'succeeded') throw new Error(`linear10 failed: ${JSON.stringify(result.error)}`);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: parallel }, loop));
  return ((total * 10) / (performance.now() - start)) * 1000;
}

/** Median of three rounds of `store` and of `memory:` taking turns, after a warm-up of each. */
async function compare(label: string, store: string, runs: number, parallel: number, target: number): Promise<string> {
  const durable = await engineWith(store);
  const memory = await engineWith('memory:');
  try {
    await stepsPerSecond(durable, Math.ceil(runs / 10), parallel);
    await stepsPerSecond(memory, runs, parallel);
    const ours: number[] = [];
    const mem: number[] = [];
    for (let i = 0; i < 3; i++) {
      ours.push(await stepsPerSecond(durable, runs, parallel));
      mem.push(await stepsPerSecond(memory, runs * 10, parallel));
    }
    const [o, m] = [median(ours), median(mem)];
    return `${label}: ${fmt(o)} steps/s (target ≥ ${fmt(target)}) ${verdict(o >= target)}; memory store ${fmt(m)} steps/s (ratio ${(o / m).toFixed(3)})`;
  } finally {
    await durable.close();
    await memory.close();
  }
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/**
 * A 1,000-step chain whose last step fails once; the resume's time until the last step's handler
 * starts, against a fresh run of the same chain with the memory store until that step starts.
 */
async function resumeLatency(store: string): Promise<string> {
  const steps = 1000;
  let yaml = 'name: long\ninputs: { n: integer }\nsteps:\n';
  for (let i = 0; i < steps; i++) yaml += `  - { name: s${i}, tool: ${i === steps - 1 ? 'last' : 'inc'}, input_map: { n: ${i ? `$.s${i - 1}.n` : '$.n'} } }\n`;
  let broken = true;
  let reached = 0;
  const lastTool = {
    name: 'last',
    parameters: { type: 'object' },
    handler: (args: Record<string, unknown>) => {
      reached = performance.now();
      if (broken) throw new Error('not yet');
      return args;
    },
  };
  const resumes: number[] = [];
  const fresh: number[] = [];
  for (const [target, samples] of [
    [store, resumes],
    ['memory:', fresh],
  ] as const) {
    const engine = await createEngine({ cache: 'off', store: target });
    engine.registerTool(benchTools[0]!);
    engine.registerTool(lastTool);
    engine.addChain(yaml);
    for (let round = 0; round < 7; round++) {
      broken = true;
      const first = await engine.run('long', { n: 0 });
      if (first.status !== 'failed') throw new Error('the last step should have failed');
      broken = false;
      const start = performance.now();
      const result = target === 'memory:' ? await engine.run('long', { n: 0 }) : await engine.resume(first.run_id);
      if (result.status !== 'succeeded') throw new Error(`resume failed: ${JSON.stringify(result.error)}`);
      if (round > 1) samples.push(reached - start);
    }
    await engine.close();
  }
  const r = median(resumes);
  return `resume of a ${steps}-step run with ${steps - 1} recorded (sqlite): ${r.toFixed(1)} ms until the last step starts (target ≤ 100 ms) ${verdict(r <= 100)}; a fresh run with the memory store takes ${median(fresh).toFixed(1)} ms to get there`;
}

export async function benchDurable(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'toolchain-bench-durable-'));
  const schema = `tc_bench_durable_${process.pid}`;
  try {
    const lines = [
      await compare('linear10, sqlite (normal), one run at a time', `sqlite:${join(dir, 'runs.db')}`, 500, 1, 5000),
      await compare('linear10, sqlite (normal), 8 runs in parallel', `sqlite:${join(dir, 'runs.db')}`, 1000, 8, 5000),
      await compare('linear10, postgres (normal), 8 runs in parallel', `${POSTGRES}?schema=${schema}`, 300, 8, 1000),
      await resumeLatency(`sqlite:${join(dir, 'resume.db')}`),
      ...(await barrierLines({ label: 'sqlite normal', store: `sqlite:${join(dir, 'barrier-normal.db')}`, durability: 'normal', raw: async () => rawSqlite(join(dir, 'raw-normal.db'), 'normal'), rounds: 300, throughputTarget: true })),
      ...(await barrierLines({ label: 'sqlite full', store: `sqlite:${join(dir, 'barrier-full.db')}`, durability: 'full', raw: async () => rawSqlite(join(dir, 'raw-full.db'), 'full'), rounds: 100, throughputTarget: true })),
      ...(await barrierLines({ label: 'postgres normal', store: `${POSTGRES}?schema=${schema}`, durability: 'normal', raw: () => rawPostgres(POSTGRES, `${schema}_raw`, 'normal'), rounds: 100, throughputTarget: false })),
      ...(await barrierLines({ label: 'postgres full', store: `${POSTGRES}?schema=${schema}_full`, durability: 'full', raw: () => rawPostgres(POSTGRES, `${schema}_rawfull`, 'full'), rounds: 100, throughputTarget: false })),
      await recoveryLine(`sqlite:${join(dir, 'recover.db')}`, dir),
      ...(await queueTakeoverLines()),
    ];
    return { name: 'durable runs', lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const pool = new pg.Pool({ connectionString: POSTGRES, max: 1 });
    for (const name of [schema, `${schema}_raw`, `${schema}_full`, `${schema}_rawfull`]) await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await pool.end();
  }
}

await runIfMain(import.meta.url, benchDurable);
