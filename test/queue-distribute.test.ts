import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/index.js';
import type { PrivateRedis } from './fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, readEffects, startWorker, type Effect, type WorkerProcess } from './helpers/queue-cluster.js';

// Distributed for_each (SPEC §7.3): the elements of a `distribute: true` for_each are jobs any
// worker takes; the run waits without a worker slot; max_concurrency bounds the elements in
// flight across the cluster; the output is every element once, in order.

let redis: PrivateRedis;
const root = mkdtempSync(join(tmpdir(), 'toolchain-queue-distribute-'));
let workers: WorkerProcess[] = [];
let engine: Engine;

beforeAll(async () => {
  redis = await privateQueueRedis();
  engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
});

afterEach(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  workers = [];
});

afterAll(async () => {
  await engine?.close();
  await redis?.destroy();
  rmSync(root, { recursive: true, force: true });
});

function spawn(args: readonly string[], log: string): WorkerProcess {
  const w = startWorker({ queue: redis.url, args: ['--stalled-interval', '1s', ...args], env: { EFFECT_LOG: log } });
  workers.push(w);
  return w;
}

/** The most calls at work at one moment. */
function mostAtOnce(effects: readonly Effect[]): number {
  const edges = effects.flatMap((e) => [[e.t0, 1] as const, [e.t1, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d));
  return most;
}

describe('distributed for_each', () => {
  it('200 elements over 3 workers: each exactly once, in order, spread over every worker, at most max_concurrency at once', async () => {
    const log = join(root, 'spread.log');
    const pool = [0, 1, 2].map(() => spawn(['--concurrency', '16'], log));
    await Promise.all(pool.map((w) => w.ready));
    const result = await engine.run('spread', { n: 200, ms: 20 }, { runId: 'spread-200' });
    expect(result.status).toBe('succeeded');
    const results = (result.outputs as { results: { value: number; pid: number }[] }).results;
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(results.map((r) => r.pid))).toEqual(new Set(pool.map((w) => w.pid)));
    const effects = readEffects(log);
    expect(effects.map((e) => e.key).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `spread-200:each[${i}]`).sort());
    expect(mostAtOnce(effects)).toBeLessThanOrEqual(40);
    // Each element's result is recorded in the store.
    const detail = await engine.runs.get('spread-200');
    expect(Object.keys(detail!.steps).filter((k) => k.startsWith('each['))).toHaveLength(200);
  }, 60_000);

  it('the run waits without a worker slot: one worker with one slot runs the run and all its elements', async () => {
    const log = join(root, 'one-slot.log');
    const worker = spawn(['--concurrency', '1'], log);
    await worker.ready;
    const result = await engine.run('spread', { n: 30 }, { runId: 'one-slot' });
    expect(result).toMatchObject({ status: 'succeeded' });
    expect(readEffects(log)).toHaveLength(30);
  }, 30_000);

  it("an element's failure comes back from its job: on_error continue keeps it in its slot, fail fails the run with it", async () => {
    const log = join(root, 'odd.log');
    const pool = [0, 1].map(() => spawn(['--concurrency', '4'], log));
    await Promise.all(pool.map((w) => w.ready));
    const kept = await engine.run('spread_odd', { n: 6 }, { runId: 'odd-continue' });
    expect(kept).toMatchObject({ status: 'succeeded' });
    expect((kept.outputs as { results: unknown[] }).results).toEqual([
      { value: 0 },
      { error: { code: 'ODD', message: '1 is odd' } },
      { value: 2 },
      { error: { code: 'ODD', message: '3 is odd' } },
      { value: 4 },
      { error: { code: 'ODD', message: '5 is odd' } },
    ]);
    const failed = await engine.run('spread_fail', { n: 6 }, { runId: 'odd-fail' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'ODD', message: expect.stringMatching(/^item [135]: [135] is odd$/) } });
    expect(await engine.runs.get('odd-fail')).toMatchObject({ status: 'failed' });
  }, 30_000);
});
