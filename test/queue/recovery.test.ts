import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/run-cli.js';
import type { PrivateRedis } from '../fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, readEffects, sleep, startWorker, until, type WorkerProcess } from '../helpers/queue-cluster.js';

// The queue when things go wrong: Redis killed and restarted empty (the store outlives it, the
// reconciler enqueues its running runs again); a worker whose chain differs refuses the run with
// CHAIN_CHANGED, and resumes it once its chain is fixed; a worker that lost its lock (its event
// loop blocked) may not record any more: the run's new owner's epoch fences it.

let redis: PrivateRedis;
const root = mkdtempSync(join(tmpdir(), 'toolchain-queue-recovery-'));
let workers: WorkerProcess[] = [];
let engine: Engine | undefined;

beforeAll(async () => {
  redis = await privateQueueRedis();
});

afterEach(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  workers = [];
  await engine?.close();
  engine = undefined;
});

afterAll(async () => {
  await redis?.destroy();
  rmSync(root, { recursive: true, force: true });
});

function spawn(args: readonly string[], extra: { chains?: string; env?: Record<string, string> } = {}, queue = redis.url): WorkerProcess {
  const w = startWorker({ queue, args: ['--stalled-interval', '1s', ...args], ...extra });
  workers.push(w);
  return w;
}

describe('the queue after failures', () => {
  it('Redis SIGKILLed mid-run and restarted empty: the reconciler enqueues the running runs again; every run finishes', async () => {
    const store = `sqlite:${join(root, 'restart.db')}`;
    const log = join(root, 'restart.log');
    const pool = [0, 1].map(() => spawn(['--store', store, '--concurrency', '4', '--reconcile-interval', '1s'], { env: { EFFECT_LOG: log } }));
    await Promise.all(pool.map((w) => w.ready));
    engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, store, cache: 'off' });
    const ids = [];
    for (let i = 0; i < 30; i++) ids.push((await engine.submit('five', { start: i, ms: 50 }, { runId: `restart-${i}` })).runId);
    await until('some steps', () => readEffects(log).length >= 20);
    await redis.kill();
    await sleep(300);
    await redis.start();

    const runs = await openStore(store);
    try {
      await until('every run finished', async () => (await runs.listRuns({ limit: 100 })).every((r) => r.status !== 'running'), 30_000, 200);
      const all = await runs.listRuns({ limit: 100 });
      expect(all).toHaveLength(30);
      for (const run of all) expect({ id: run.id, status: run.status, outputs: run.outputs }).toEqual({ id: run.id, status: 'succeeded', outputs: { value: Number(run.id.split('-')[1]) + 5 } });
    } finally {
      await runs.close();
    }
    expect(pool.map((w) => w.stderr()).join('')).toMatch(/enqueued again \d+ running run\(s\) whose job the queue had lost/);
  }, 60_000);

  it('a run belongs to its queue: the reconciler of another queue on the same Redis and store leaves it to that queue\'s workers', async () => {
    const store = `sqlite:${join(root, 'two-queues.db')}`;
    const log = join(root, 'two-queues.log');
    const other = `${redis.url}?queue=other`;
    const submit = (queue: string, runId: string) =>
      runCli(['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins'), 'run', 'five', '--queue', queue, '--store', store, '--run-id', runId, '--no-wait']);
    expect(await submit(other, 'elsewhere-1')).toMatchObject({ code: 0, stdout: 'elsewhere-1\n' });
    // A run of the default queue whose job Redis lost: the default queue's reconciler enqueues it again.
    expect(await submit(redis.url, 'lost-1')).toMatchObject({ code: 0 });
    const { Queue } = await import('bullmq');
    const connection = { host: '127.0.0.1', port: Number(new URL(redis.url).port) };
    const defaultQueue = new Queue('toolchain', { connection });
    const otherQueue = new Queue('other', { connection });
    try {
      await defaultQueue.remove('lost-1');
      const worker = spawn(['--store', store, '--reconcile-interval', '1s'], { env: { EFFECT_LOG: log } });
      await worker.ready;
      const runs = await openStore(store);
      try {
        await until('the lost run finished', async () => (await runs.getRun('lost-1'))?.status === 'succeeded');
        // Its first pass (at start, before it took any job) saw both runs and enqueued its own only.
        expect(worker.stderr()).toContain('enqueued again 1 running run(s)');
        const elsewhere = await runs.getRun('elsewhere-1');
        expect(elsewhere).toMatchObject({ status: 'running', owner: 'queued', queue: 'other' });
        expect(await (await otherQueue.getJob('elsewhere-1'))?.getState()).toBe('waiting');
        expect(await defaultQueue.getJob('elsewhere-1')).toBeUndefined();
        expect(readEffects(log).filter((e) => e.key.startsWith('elsewhere-1:'))).toEqual([]);
        // Its own queue's worker runs it.
        const mine = spawn(['--store', store], { env: { EFFECT_LOG: log } }, other);
        await mine.ready;
        await until('the other queue\'s run finished', async () => (await runs.getRun('elsewhere-1'))?.status === 'succeeded');
        expect(new Set(readEffects(log).filter((e) => e.key.startsWith('elsewhere-1:')).map((e) => e.pid))).toEqual(new Set([mine.pid]));
        expect(await runs.getRun('elsewhere-1')).toMatchObject({ queue: 'other', outputs: { value: 5 } });
      } finally {
        await runs.close();
      }
    } finally {
      await defaultQueue.close();
      await otherQueue.close();
    }
  }, 40_000);

  it('a worker with an edited chain refuses the run with CHAIN_CHANGED, recorded on the run; with the chain fixed, the run resumes', async () => {
    const chains = join(root, 'edited-chains');
    mkdirSync(chains);
    const original = readFileSync(join(FIXTURE, 'chains', 'five.yaml'), 'utf8');
    writeFileSync(join(chains, 'five.yaml'), `${original}# edited on this worker only\n`);
    const worker = spawn([], { chains });
    await worker.ready;
    engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
    const refused = await engine.run('five', { start: 1 }, { runId: 'changed-1' });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'CHAIN_CHANGED', message: expect.stringContaining("chain 'five' on this worker") } });
    expect(await engine.runs.get('changed-1')).toMatchObject({ status: 'failed', error: { code: 'CHAIN_CHANGED' } });

    // Fixed on the worker (hot reload), then resumed through the queue.
    copyFileSync(join(FIXTURE, 'chains', 'five.yaml'), join(chains, 'five.yaml'));
    await until('the worker reloaded its chains', () => worker.stderr().includes('chains reloaded'));
    const resumed = await engine.resume('changed-1');
    expect(resumed).toMatchObject({ status: 'succeeded', outputs: { value: 6 } });
  }, 30_000);

  it('a worker that lost its lock (event loop blocked) cannot record: the new owner re-runs the step and its epoch fences the old one', async () => {
    const log = join(root, 'fence.log');
    const marker = join(root, 'fence.marker');
    const a = spawn([], { env: { EFFECT_LOG: log } });
    await a.ready;
    engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
    const submitted = await engine.submit('fenced', { marker }, { runId: 'fenced-1' });
    await until('worker A blocked in its step', () => existsSync(marker));
    const b = spawn([], { env: { EFFECT_LOG: log } });
    const result = await submitted.result();
    expect(result).toMatchObject({ status: 'succeeded', outputs: { stalled_in: b.pid, after_in: b.pid } });
    await until('worker A stopped the run', () => a.stderr().includes('STORE_FENCED'), 10_000);
    const detail = await engine.runs.get('fenced-1');
    expect(detail?.steps.stall?.output).toEqual({ pid: b.pid });
    expect(detail?.steps.after?.output).toMatchObject({ pid: b.pid });
    // A ran `stall` (blocked, lock lost) but never got to `after`; B ran both.
    const effects = readEffects(log);
    expect(effects.filter((e) => e.key.endsWith(':after')).map((e) => e.pid)).toEqual([b.pid]);
    expect(effects.filter((e) => e.key.endsWith(':stall')).map((e) => e.pid).sort()).toEqual([a.pid, b.pid].sort());
  }, 30_000);
});
