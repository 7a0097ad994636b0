import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.js';
import type { PrivateRedis } from './fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, sleep, startWorker, type WorkerProcess } from './helpers/queue-cluster.js';
import { runCli } from './helpers/run-cli.js';

// Two real `toolchain worker` processes on one queue (a private Redis, which is also the store),
// one chain with `every: 1s`: both fire every tick into the queue, and the store keeps one run of
// each, executed by whichever worker took its job (each run records the queue it went through).
// Then an event trigger: events a `toolchain emit` process records start one queued run each,
// under job ids the event ids give (a colon in one made into a hash: BullMQ refuses it).

const chains = mkdtempSync(join(tmpdir(), 'toolchain-triggers-queue-'));
let redis: PrivateRedis;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  redis = await privateQueueRedis();
});
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  await redis.destroy();
  rmSync(chains, { recursive: true, force: true });
});

describe('workers fire an every: 1s trigger into their queue', () => {
  it('one queued run per tick, no tick doubled or lost', async () => {
    mkdirSync(join(chains, 'chains'));
    writeFileSync(join(chains, 'chains', 'tick.yaml'), 'name: tick\ntriggers:\n  - every: 1s\n    overlap: allow\nsteps:\n  - name: w\n    tool: work\n    input_map: { value: 1, ms: 5 }\n');
    const env = { EFFECT_LOG: join(chains, 'effects.log'), TOOLCHAIN_CACHE_DIR: join(chains, 'cache') };
    const spec = { queue: redis.url, chains: join(chains, 'chains'), plugins: join(FIXTURE, 'plugins'), env };
    workers.push(startWorker(spec), startWorker(spec));
    await Promise.all(workers.map((w) => w.ready));
    const startedAt = Date.now();
    await sleep(5_000);
    const stoppedAt = Date.now();
    for (const w of workers) w.kill('SIGINT');
    await Promise.all(workers.map((w) => w.exited));

    const store = await openStore(redis.url);
    const runs = await store.listRuns({ chain: 'tick', limit: 1000 });
    await store.close();
    const ticks = runs.map((r) => Date.parse(r.id.replace(/^tick#1@(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'))).sort((a, b) => a - b);
    expect(ticks.every((t) => !Number.isNaN(t))).toBe(true);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.slice(1).filter((t, i) => t - ticks[i]! !== 1000)).toEqual([]);
    const elapsed = Math.floor(stoppedAt / 1000) - Math.floor(startedAt / 1000);
    expect(Math.abs(ticks.length - elapsed)).toBeLessThanOrEqual(1);
    expect(new Set(runs.map((r) => r.queue))).toEqual(new Set([new URL(redis.url).searchParams.get('queue') ?? 'toolchain']));
    expect(runs.filter((r) => r.status === 'succeeded').length).toBeGreaterThanOrEqual(runs.length - 1);
  }, 60_000);
});

describe('workers fire an event trigger into their queue', () => {
  it('one queued run per event recorded by toolchain emit, an id with a colon included', async () => {
    const dir = join(chains, 'events');
    mkdirSync(join(dir, 'chains'), { recursive: true });
    writeFileSync(join(dir, 'chains', 'orders.yaml'), 'name: orders\ninputs:\n  n: { type: integer, default: 0 }\ntriggers:\n  - event: order.created\n    input_map: { n: $.event.payload.n }\nsteps:\n  - name: w\n    tool: work\n    input_map: { value: $.n, ms: 5 }\n');
    const env = { EFFECT_LOG: join(dir, 'effects.log'), TOOLCHAIN_CACHE_DIR: join(chains, 'cache') };
    const spec = { queue: redis.url, chains: join(dir, 'chains'), plugins: join(FIXTURE, 'plugins'), env };
    const pair = [startWorker(spec), startWorker(spec)];
    workers.push(...pair);
    await Promise.all(pair.map((w) => w.ready));
    for (const [n, id] of [[1, 'o-1'], [2, 'order:2'], [3, 'o-3']] as const) {
      const sent = await runCli(['emit', 'order.created', '--data', JSON.stringify({ n }), '--id', id, '--store', redis.url], { env });
      expect(sent.code, sent.stderr).toBe(0);
    }
    const store = await openStore(redis.url);
    try {
      let runs = await store.listRuns({ chain: 'orders', limit: 100 });
      for (let i = 0; i < 200 && runs.filter((r) => r.status === 'succeeded').length < 3; i++) {
        await sleep(50);
        runs = await store.listRuns({ chain: 'orders', limit: 100 });
      }
      expect(runs.map((r) => r.id).sort()).toEqual(['orders#1@o-1', 'orders#1@o-3', expect.stringMatching(/^orders#1@sha256-[0-9a-f]{32}$/)]);
      expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
      expect(runs.map((r) => (r.input as { n: number }).n).sort()).toEqual([1, 2, 3]);
    } finally {
      await store.close();
      for (const w of pair) w.kill('SIGINT');
      await Promise.all(pair.map((w) => w.exited));
    }
  }, 60_000);
});
