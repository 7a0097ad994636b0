// Queue figures, each next to a plain baseline measured in this process:
// - throughput of 5-step no-op runs through BullMQ with 1, 2 and 4 worker processes (Redis store;
//   target ≥ 1,000 steps/s with 2), next to a hand-written BullMQ worker in this process doing the
//   same Redis work per step (one HSET) without the engine, and to a local run (memory store);
// - the sleepy workload (5 steps of 50 ms) with 1, 2, 4 workers × 32 slots, 20 runs per slot (fewer
//   left the ramp-up and the last runs weighing on the figure), next to the ideal
//   (every slot busy all the time: a plain Promise loop of the same sleeps);
// - resume latency: SIGKILL of the worker running a run → its next step starting on another worker,
//   with --stalled-interval 2s (target ≤ 5 s), next to the bound BullMQ promises (lock + check).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { runIfMain, verdict, type BenchResult } from './harness.js';
import { startCluster, type Cluster } from './queue-cluster.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Seconds to submit `runs` runs of `chain` and have every result, `inFlight` submitted at a time. */
async function drive(engine: Engine, chain: string, runs: number, inFlight: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < runs) {
        const result = await engine.run(chain, {});
        if (result.status !== 'succeeded') throw new Error(`${chain} failed: ${JSON.stringify(result.error)}`);
      }
    }),
  );
  return (performance.now() - start) / 1000;
}

/** The baseline: a BullMQ worker in this process, one HSET per step, no engine. */
async function plainBullMQ(url: string, runs: number): Promise<number> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const name = `plain${Date.now()}`;
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job) => {
    for (let s = 1; s <= 5; s++) await connection.hset(`plain:${job.id}`, `s${s}`, '{}');
    return {};
  }, { connection, concurrency: 32 });
  const start = performance.now();
  const done = new Promise<void>((resolve) => {
    let n = 0;
    worker.on('completed', () => ++n === runs && resolve());
  });
  await queue.addBulk(Array.from({ length: runs }, (_, i) => ({ name: 'r', data: {}, opts: { jobId: `p${i}`, removeOnComplete: true } })));
  await done;
  const seconds = (performance.now() - start) / 1000;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return seconds;
}

async function throughput(cluster: Cluster, producer: Engine, lines: string[]): Promise<void> {
  const runs = 1500;
  let two = 0;
  for (const n of [1, 2, 4]) {
    await cluster.startWorkers(n, ['--concurrency', '32', '--stalled-interval', '2s']);
    await drive(producer, 'noop5', 100, 64); // warm-up
    const s = await drive(producer, 'noop5', runs, 128);
    await cluster.stopWorkers();
    const steps = (runs * 5) / s;
    if (n === 2) two = steps;
    lines.push(`noop5 through the queue, ${n} worker(s) × 32: ${fmt(steps)} steps/s, ${fmt(runs / s)} runs/s${n === 2 ? ` (target ≥ 1,000 steps/s) ${verdict(steps >= 1000)}` : ''}`);
  }
  const plain = plainBullMQ(cluster.url, runs);
  const ps = await plain;
  lines.push(`baseline, a plain BullMQ worker in this process (1 HSET per step, no engine): ${fmt((runs * 5) / ps)} steps/s`);
  const local = await createEngine({ chainsDir: join(cluster.dir, 'chains'), pluginsDir: join(cluster.dir, 'plugins'), cache: 'off' });
  const ls = await drive(local, 'noop5', runs * 4, 128);
  await local.close();
  const local5 = (runs * 20) / ls;
  lines.push(`baseline, a local run (memory store, this process): ${fmt(local5)} steps/s; the queue's cost per step with 2 workers: ${((1e6 / two) - (1e6 / local5)).toFixed(0)} µs of wall time on this machine (workers, Redis and the submitter share its 2 cores)`);
}

async function sleepy(cluster: Cluster, producer: Engine, lines: string[]): Promise<void> {
  for (const n of [1, 2, 4]) {
    await cluster.startWorkers(n, ['--concurrency', '32', '--stalled-interval', '2s']);
    const slots = 32 * n;
    const runs = slots * 20;
    const s = await drive(producer, 'sleep5', runs, slots * 2);
    await cluster.stopWorkers();
    // The ideal: every slot always busy with a 250 ms run.
    const start = performance.now();
    await Promise.all(Array.from({ length: slots }, async () => {
      for (let r = 0; r < 20; r++) for (let st = 0; st < 5; st++) await new Promise((res) => setTimeout(res, 50));
    }));
    const ideal = (performance.now() - start) / 1000;
    lines.push(`sleep5 (5 × 50 ms), ${n} worker(s) × 32: ${fmt(runs / s)} runs/s; ideal (plain sleeps, ${slots} at once) ${fmt(runs / ideal)} runs/s (ratio ${(ideal / s).toFixed(2)})`);
  }
}

async function resumeLatency(cluster: Cluster, producer: Engine, lines: string[]): Promise<void> {
  const workers = await cluster.startWorkers(2, ['--concurrency', '4', '--stalled-interval', '2s']);
  const marks = (): { key: string; pid: number; t0: number }[] => {
    try {
      return readFileSync(join(cluster.dir, 'mark.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; pid: number; t0: number });
    } catch {
      return [];
    }
  };
  const submitted = await producer.submit('mark5', {}, { runId: 'latency' });
  while (!marks().some((m) => m.key === 'latency:s2')) await new Promise((r) => setTimeout(r, 20));
  const victim = marks().find((m) => m.key === 'latency:s2')!.pid;
  const killedAt = Date.now();
  workers.find((w) => w.pid === victim)!.kill('SIGKILL');
  while (!marks().some((m) => m.pid !== victim && m.t0 >= killedAt)) await new Promise((r) => setTimeout(r, 20));
  const latency = (marks().find((m) => m.pid !== victim && m.t0 >= killedAt)!.t0 - killedAt) / 1000;
  await submitted.result();
  await cluster.stopWorkers();
  lines.push(`resume after SIGKILL (--stalled-interval 2s): ${latency.toFixed(2)} s until the next step started on the other worker (target ≤ 5 s) ${verdict(latency <= 5)}; BullMQ's bound: lock 2 s + check every 2 s = 4 s`);
}

export async function benchQueue(): Promise<BenchResult> {
  const cluster = await startCluster();
  const producer = await createEngine({ chainsDir: join(cluster.dir, 'chains'), queue: cluster.url, cache: 'off' });
  const lines: string[] = [];
  try {
    await throughput(cluster, producer, lines);
    await sleepy(cluster, producer, lines);
    await resumeLatency(cluster, producer, lines);
  } finally {
    await producer.close();
    await cluster.close();
  }
  return { name: 'queue: runs on BullMQ workers', lines };
}

await runIfMain(import.meta.url, benchQueue);
