// Takeover of a queued run whose worker was killed (SIGKILL), with BullMQ's stalled check left at
// its default (30 s lock, checked every 30 s): the time until the run's next step starts on a
// live worker — one started after the kill (counted from starting its process, which includes
// Node's start and loading the chains) and one that was up all along (counted from the kill). Workers are `toolchain worker` processes on a private Redis
// (bench/queue-cluster.ts), which is their run store too.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createEngine } from '../src/engine/engine.js';
import { median, verdict } from './harness.js';
import { startCluster } from './queue-cluster.js';

interface Mark {
  readonly key: string;
  readonly pid: number;
  readonly t0: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function queueTakeoverLines(rounds = 3): Promise<string[]> {
  const cluster = await startCluster();
  const producer = await createEngine({ chainsDir: join(cluster.dir, 'chains'), queue: cluster.url, cache: 'off' });
  const marks = (): Mark[] => {
    try {
      return readFileSync(join(cluster.dir, 'mark.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Mark);
    } catch {
      return [];
    }
  };
  const until = async (check: () => Mark | undefined): Promise<Mark> => {
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      await sleep(10);
    }
  };
  /** Submits a run of mark5 (five 1 s steps), waits for its second step to start, SIGKILLs the worker running it. */
  const killMidRun = async (id: string, workers: readonly ChildProcess[]): Promise<{ victim: number; killedAt: number; result: Promise<unknown> }> => {
    const submitted = await producer.submit('mark5', {}, { runId: id });
    const second = await until(() => marks().find((m) => m.key === `${id}:s2`));
    const killedAt = Date.now();
    const victim = workers.find((w) => w.pid === second.pid)!;
    const exited = new Promise((r) => victim.once('exit', r));
    victim.kill('SIGKILL');
    await exited;
    return { victim: second.pid, killedAt, result: submitted.result() };
  };
  const fresh: number[] = [];
  const surviving: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // A worker started after the kill.
      const alone = await cluster.startWorkers(1, []);
      const a = await killMidRun(`fresh-${round}`, alone);
      const startedAt = Date.now();
      const started = await cluster.startWorkers(1, []);
      const next = await until(() => marks().find((m) => m.pid === started[0]!.pid && m.key.startsWith(`fresh-${round}:`)));
      fresh.push(next.t0 - startedAt);
      await a.result;
      await cluster.stopWorkers();
      // A worker that was up all along.
      const pair = await cluster.startWorkers(2, []);
      const b = await killMidRun(`surviving-${round}`, pair);
      const other = await until(() => marks().find((m) => m.pid !== b.victim && m.key.startsWith(`surviving-${round}:`) && m.t0 >= b.killedAt));
      surviving.push(other.t0 - b.killedAt);
      await b.result;
      await cluster.stopWorkers();
    }
  } finally {
    await producer.close();
    await cluster.close();
  }
  const f = median(fresh);
  const s = median(surviving);
  return [
    `queued run, worker SIGKILLed, a worker started after: ${(f / 1000).toFixed(2)} s from starting its process until the run's next step started on it (target ≤ 2 s) ${verdict(f <= 2000)}; BullMQ's stalled check alone: 30 to 60 s`,
    `queued run, worker SIGKILLed, a worker up all along: ${(s / 1000).toFixed(2)} s from the kill until the run's next step started on it (target ≤ 2 s) ${verdict(s <= 2000)}`,
  ];
}
