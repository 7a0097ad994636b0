import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { runCli } from './helpers/run-cli.js';
import { FIXTURE, readEffects, until, useQueueCluster } from './helpers/queue-cluster.js';

// Operating the workers (SPEC §7.3): a cancel from the submitting process stops the run on its
// worker within a second; SIGTERM lets the runs executing finish, then the worker exits 0.

const cluster = useQueueCluster('queue-control');
const { root, spawn } = cluster;

describe('operating the workers', () => {
  it('a cancel from the submitting process stops the run on its worker within a second', async () => {
    const worker = spawn([]);
    await worker.ready;
    const submitted = await cluster.engine.submit('slow', {}, { runId: 'cancel-1' });
    await until('the worker runs it', async () => (await cluster.engine.runs.get('cancel-1'))?.owner?.includes(`:${worker.pid}:`) === true);
    const asked = Date.now();
    expect(await cluster.engine.cancel('cancel-1')).toBe(true);
    await until('the run cancelled', async () => (await cluster.engine.runs.get('cancel-1'))?.status === 'cancelled', 1_000, 10);
    expect(Date.now() - asked).toBeLessThan(1_000);
    expect(await submitted.result()).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' } });
  });

  it('SIGTERM while 10 runs execute: they finish, the worker exits 0, nothing is lost', async () => {
    const log = join(root, 'graceful.log');
    const worker = spawn(['--concurrency', '10', '--grace', '30s'], { EFFECT_LOG: log });
    await worker.ready;
    const submitted = await Promise.all(Array.from({ length: 10 }, (_, i) => cluster.engine.submit('five', { start: i, ms: 300 }, { runId: `graceful-${i}` })));
    await until('10 runs executing', () => new Set(readEffects(log).map((e) => e.key.split(':')[0])).size === 10);
    worker.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toMatch(/SIGTERM: taking no more runs; 10 executing/);
    const results = await Promise.all(submitted.map((s) => s.result()));
    expect(results.map((r) => [r.status, r.outputs])).toEqual(results.map((_, i) => ['succeeded', { value: i + 5 }]));
    // Each step ran once: none was cut short and run again.
    expect(readEffects(log)).toHaveLength(50);
  });

  it('a second signal exits at once; the run it left is resumed by another worker', async () => {
    const log = join(root, 'second.log');
    const first = spawn(['--grace', '30s'], { EFFECT_LOG: log });
    await first.ready;
    const submitted = await cluster.engine.submit('five', { start: 0, ms: 400 }, { runId: 'second-signal' });
    await until('a step done', () => readEffects(log).length >= 1);
    first.kill('SIGTERM');
    await until('the first signal seen', () => first.stderr().includes('taking no more runs'));
    first.kill('SIGINT');
    expect(await first.exited).toBe(130);
    const second = spawn([], { EFFECT_LOG: log });
    expect(await submitted.result()).toMatchObject({ status: 'succeeded', outputs: { value: 5 } });
    expect(readEffects(log).filter((e) => e.pid === second.pid).length).toBeGreaterThan(0);
  });

  it("warns at start when Redis may evict keys (maxmemory-policy other than noeviction)", async () => {
    const admin = new Redis(cluster.redis.url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const worker = spawn([]);
      await worker.ready;
      expect(worker.stderr()).toContain("has maxmemory-policy 'allkeys-lru': it may evict queued runs and their locks when memory runs out; set 'maxmemory-policy noeviction'");
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });

  it('refuses a queue URL that is not Redis, and a --no-wait without a queue, with exit code 2', async () => {
    const chains = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
    const bad = await runCli([...chains, 'run', 'five', '--queue', 'postgres://localhost/x']);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("QUEUE_URL queue 'postgres://localhost/x': a queue lives in Redis, not 'postgres:'; expected redis://HOST:PORT[/DB][?queue=NAME] or rediss://…") });
    const noWait = await runCli([...chains, 'run', 'five', '--no-wait', '--store', 'memory:']);
    expect(noWait).toMatchObject({ code: 2, stderr: expect.stringContaining('--no-wait needs --queue') });
  });
});
