import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEffects, until, useQueueCluster, type Effect, type WorkerProcess } from '../helpers/queue-cluster.js';

// Distributed for_each: the elements of a `distribute: true` for_each are jobs any
// worker takes; the run waits without a worker slot; max_concurrency bounds the elements in
// flight across the cluster; the output is every element once, in order.

const cluster = useQueueCluster('queue-distribute');
const { root } = cluster;
const spawn = (args: readonly string[], log: string): WorkerProcess => cluster.spawn(args, { EFFECT_LOG: log });

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
    const result = await cluster.engine.run('spread', { n: 200, ms: 20 }, { runId: 'spread-200' });
    expect(result.status).toBe('succeeded');
    const results = (result.outputs as { results: { value: number; pid: number }[] }).results;
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(results.map((r) => r.pid))).toEqual(new Set(pool.map((w) => w.pid)));
    const effects = readEffects(log);
    expect(effects.map((e) => e.key).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `spread-200:each[${i}]`).sort());
    expect(mostAtOnce(effects)).toBeLessThanOrEqual(40);
    // Each element's result is recorded in the store.
    const detail = await cluster.engine.runs.get('spread-200');
    expect(Object.keys(detail!.steps).filter((k) => k.startsWith('each['))).toHaveLength(200);
  }, 60_000);

  it('the run waits without a worker slot: one worker with one slot runs the run and all its elements', async () => {
    const log = join(root, 'one-slot.log');
    const worker = spawn(['--concurrency', '1'], log);
    await worker.ready;
    const result = await cluster.engine.run('spread', { n: 30 }, { runId: 'one-slot' });
    expect(result).toMatchObject({ status: 'succeeded' });
    expect(readEffects(log)).toHaveLength(30);
  }, 30_000);

  it("an element's failure comes back from its job: on_error continue keeps it in its slot, fail fails the run with it", async () => {
    const log = join(root, 'odd.log');
    const pool = [0, 1].map(() => spawn(['--concurrency', '4'], log));
    await Promise.all(pool.map((w) => w.ready));
    const kept = await cluster.engine.run('spread_odd', { n: 6 }, { runId: 'odd-continue' });
    expect(kept).toMatchObject({ status: 'succeeded' });
    expect((kept.outputs as { results: unknown[] }).results).toEqual([
      { value: 0 },
      { error: { code: 'ODD', message: '1 is odd' } },
      { value: 2 },
      { error: { code: 'ODD', message: '3 is odd' } },
      { value: 4 },
      { error: { code: 'ODD', message: '5 is odd' } },
    ]);
    const failed = await cluster.engine.run('spread_fail', { n: 6 }, { runId: 'odd-fail' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'ODD', message: expect.stringMatching(/^item [135]: [135] is odd$/) } });
    expect(await cluster.engine.runs.get('odd-fail')).toMatchObject({ status: 'failed' });
  }, 30_000);

  it('a cancel while the run is parked at its elements: those at work are aborted, none starts after it, the run ends cancelled', async () => {
    const log = join(root, 'cancel.log');
    const pool = [0, 1].map(() => spawn(['--concurrency', '4'], log));
    await Promise.all(pool.map((w) => w.ready));
    // 120 elements of 400 ms, at most 40 in flight and 8 worker slots: about 15 waves, if nothing stops them.
    const submitted = await cluster.engine.submit('spread', { n: 120, ms: 400 }, { runId: 'cancel-parked' });
    await until('the first elements done', () => readEffects(log).length >= 8);
    expect(await cluster.engine.runs.get('cancel-parked')).toMatchObject({ status: 'running' });
    const asked = Date.now();
    expect(await cluster.engine.cancel('cancel-parked')).toBe(true);
    expect(await submitted.result()).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' } });
    expect(await cluster.engine.runs.get('cancel-parked')).toMatchObject({ status: 'cancelled' });
    // Elements at work when the cancel came were aborted (an aborted call logs nothing), and no element started after it.
    await new Promise((r) => setTimeout(r, 1_000));
    const effects = readEffects(log);
    expect(effects.length).toBeLessThan(40);
    for (const e of effects) expect(e.t0).toBeLessThan(asked);
    // Not aborted, an element at work would have finished (and logged) up to 400 ms after the cancel; the cancel reaches the workers far sooner.
    for (const e of effects) expect(e.t1).toBeLessThan(asked + 150);
  }, 30_000);
});
