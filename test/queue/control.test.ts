import { spawn as spawnProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/processes.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { FIXTURE, readEffects, until, useQueueCluster } from '../helpers/queue-cluster.js';

// Operating the workers: a cancel from the submitting process stops the run on its
// worker within a second; SIGTERM lets the runs executing finish, then the worker exits 0.

const cluster = useQueueCluster('queue-control');
const { root, spawn } = cluster;

describe('operating the workers', () => {
  it('a cancel from the submitting process stops the run on its worker within a second', async () => {
    const worker = spawn([]);
    await worker.ready;
    const submitted = await cluster.engine.submit('slow', {}, { runId: 'cancel-1' });
    await until('the worker runs it', async () => (await cluster.engine.runs.get('cancel-1'))?.owner?.includes(`:${worker.pid}:`) === true);
    expect(await cluster.engine.cancel('cancel-1')).toBe(true);
    // until() fails if the run is not cancelled within the second the docs promise.
    await until('the run cancelled', async () => (await cluster.engine.runs.get('cancel-1'))?.status === 'cancelled', 1_000, 10);
    expect(await submitted.result()).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' } });
  });

  it('a signal that aborts while the run is being submitted cancels it (the abort event is not waited for)', async () => {
    const worker = spawn([]);
    await worker.ready;
    // Aborted before the submitter listens for its result: as a Ctrl-C that lands while the run is enqueued.
    const abort = new AbortController();
    abort.abort();
    const result = await cluster.engine.run('slow', {}, { runId: 'cancel-early', signal: abort.signal });
    expect(result).toMatchObject({ run_id: 'cancel-early', status: 'cancelled' });
  });

  it('a re-run from a step is recorded with what it keeps and executed by a worker: only that step and those after it run', async () => {
    const log = join(root, 'rerun.log');
    const worker = spawn([], { EFFECT_LOG: log });
    await worker.ready;
    expect(await cluster.engine.run('five', { start: 0 }, { runId: 'rerun-origin' })).toMatchObject({ status: 'succeeded', outputs: { value: 5 } });
    expect((await cluster.engine.runs.get('rerun-origin'))?.resumes).toEqual([]);
    const again = await cluster.engine.rerun('rerun-origin', { from: 's4', runId: 'rerun-1' });
    expect(again).toMatchObject({ run_id: 'rerun-1', status: 'succeeded', outputs: { value: 5 } });
    // Keys are RUN:STEP: the re-run called s4 and s5 on the worker, and nothing else.
    expect(readEffects(log).map((e) => e.key).filter((k) => k.startsWith('rerun-1:'))).toEqual(['rerun-1:s4', 'rerun-1:s5']);
    expect(readEffects(log).every((e) => e.pid === worker.pid)).toBe(true);
    const stored = await cluster.engine.runs.get('rerun-1');
    expect(stored).toMatchObject({ rerun_of: 'rerun-origin', rerun_from: 's4' });
    expect(stored?.steps.s1).toMatchObject({ status: 'succeeded' });
    // A refusal is as without a queue: nothing is recorded or enqueued.
    expect(await cluster.engine.rerun('rerun-origin', { from: 's9' })).toMatchObject({ status: 'failed', error: { code: 'STEP_NOT_FOUND' } });
    expect(await cluster.engine.rerun('rerun-origin', { from: 's4', runId: 'rerun-1' })).toMatchObject({ status: 'failed', error: { code: 'RUN_ID_CONFLICT' } });
    // The same from the CLI, the queue's Redis being the store.
    const chains = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
    const cli = await runCli([...chains, 'rerun', 'rerun-origin', '--from', 's5', '--run-id', 'rerun-cli', '--queue', cluster.redis.url, '--json']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ run_id: 'rerun-cli', status: 'succeeded', outputs: { value: 5 } });
    expect(readEffects(log).map((e) => e.key).filter((k) => k.startsWith('rerun-cli:'))).toEqual(['rerun-cli:s5']);
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

  it('run --queue with no worker says, after a few seconds, that it waits for one; a worker that takes the run at once leaves it unsaid', async () => {
    const chains = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
    const child = spawnProcess(process.execPath, [join(REPO, 'bin', 'toolchain.js'), ...chains, 'run', 'five', '--queue', cluster.redis.url, '--run-id', 'nobody-1'], { cwd: REPO });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await until('the waiting line', () => stderr.includes('queued; '), 15_000);
    expect(stderr).toBe(`run nobody-1\nqueued; waiting for a worker on ${cluster.redis.url} (start one with 'toolchain worker --queue URL')\n`);
    const worker = spawn([]);
    await worker.ready;
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ value: 5 });
    expect(stderr.split('queued; ').length).toBe(2);
    // A worker there already: the run is taken at once, and nothing is said.
    const taken = await runCli([...chains, 'run', 'five', '--queue', cluster.redis.url]);
    expect(taken.code).toBe(0);
    expect(taken.stderr).toMatch(/^run \S+\n$/);
  });

  it('names the queue (QUEUE_UNAVAILABLE) when its Redis does not answer, also where the run store defaults to that Redis', async () => {
    const chains = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
    const queue = `redis://127.0.0.1:${await freePort()}`;
    for (const args of [['run', 'five', '--queue', queue], ['worker', '--queue', queue], ['run', 'five', '--queue', queue, '--store', 'memory:']]) {
      const { code, stderr } = await runCli([...chains, ...args]);
      expect({ args, code, stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(new RegExp(`^error: QUEUE_UNAVAILABLE the queue ${queue} cannot be reached.*; start Redis, or check --queue\n$`)) });
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
