import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import type { PrivateRedis } from '../fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, readEffects, startWorker, until, type WorkerProcess } from '../helpers/queue-cluster.js';

// A worker killed with SIGKILL in the middle of a run: the run store says its owner is gone, and a
// live worker — one started after the kill, or one that was up all along — takes the run over
// itself, without waiting for BullMQ's stalled check (the workers here keep BullMQ's 30 s: the
// job's stalled counter shows which of the two moved it). The run finishes with the right
// output, and no step whose result was recorded before the kill runs again.

let redis: PrivateRedis;
const root = mkdtempSync(join(tmpdir(), 'toolchain-queue-takeover-'));
let workers: WorkerProcess[] = [];
let engine: Engine | undefined;
let store: RunStore | undefined;
let queue: Queue | undefined;

beforeAll(async () => {
  redis = await privateQueueRedis();
  queue = new Queue('toolchain', { connection: { host: '127.0.0.1', port: Number(new URL(redis.url).port) } });
});

afterEach(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  workers = [];
  await engine?.close();
  await store?.close();
  engine = undefined;
  store = undefined;
});

afterAll(async () => {
  await queue?.close();
  await redis?.destroy();
  rmSync(root, { recursive: true, force: true });
});

function spawn(storeUrl: string, log: string): WorkerProcess {
  const w = startWorker({ queue: redis.url, args: ['--store', storeUrl, '--stalled-interval', '30s'], env: { EFFECT_LOG: log } });
  workers.push(w);
  return w;
}

/**
 * Starts a run on one worker and kills it with SIGKILL after two recorded steps; `survivor`: a
 * second worker is started once the first holds the run (after its first step), before the kill.
 */
async function killMidRun(name: string, survivor: boolean) {
  const storeUrl = `sqlite:${join(root, `${name}.db`)}`;
  const log = join(root, `${name}.log`);
  const first = spawn(storeUrl, log);
  await first.ready;
  engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, store: storeUrl, cache: 'off' });
  store = await openStore(storeUrl);
  const runs = store;
  const submission = await engine.submit('five', { start: 10, ms: 300 }, { runId: `${name}-1` });
  let other: WorkerProcess | undefined;
  if (survivor) {
    await until('the first step recorded', async () => (await runs.getSteps(submission.runId)).length >= 1);
    other = spawn(storeUrl, log);
    await other.ready;
  }
  await until('two recorded steps', async () => (await runs.getSteps(submission.runId)).length >= 2);
  first.kill('SIGKILL');
  await first.exited;
  const recorded = (await runs.getSteps(submission.runId)).map((s) => s.key);
  expect(await runs.getRun(submission.runId)).toMatchObject({ status: 'running', epoch: 2 });
  return { storeUrl, log, first, other, submission, recorded, runs };
}

async function expectTakenOver(run: Awaited<ReturnType<typeof killMidRun>>, taker: WorkerProcess): Promise<void> {
  const result = await run.submission.result();
  expect(result).toMatchObject({ status: 'succeeded', outputs: { value: 15 } });
  // Taken over once, by the live worker: the steps recorded after the kill carry its pid.
  const steps = await run.runs.getSteps(run.submission.runId);
  expect(steps.map((s) => s.key)).toEqual(['s1', 's2', 's3', 's4', 's5']);
  const byPid = (pid: number) => steps.filter((s) => (s.output as { pid: number }).pid === pid).map((s) => s.key);
  expect(byPid(run.first.pid)).toEqual(run.recorded);
  expect([...byPid(run.first.pid), ...byPid(taker.pid)]).toEqual(['s1', 's2', 's3', 's4', 's5']);
  expect(await run.runs.getRun(run.submission.runId)).toMatchObject({ status: 'succeeded', epoch: 3 });
  // No step recorded before the kill ran again; a step that ran twice ran first in the killed worker.
  const effects = readEffects(run.log).filter((e) => e.key.startsWith(`${run.submission.runId}:`));
  for (const key of run.recorded) expect(effects.filter((e) => e.key.endsWith(`:${key}`))).toHaveLength(1);
  for (const e of effects.filter((x) => x.pid !== taker.pid)) expect(e.pid).toBe(run.first.pid);
  // The live worker moved the job back, not BullMQ's stalled check (which counts what it moves).
  expect(taker.stderr()).toContain(`took over 1 run(s) whose worker died: ${run.submission.runId}`);
  const job = await queue!.getJob(run.submission.runId);
  expect({ stalled: job?.stalledCounter, started: job?.attemptsStarted }).toEqual({ stalled: 0, started: 2 });
}

describe('a queued run whose worker was killed', () => {
  it('is taken over by a worker started after the kill, from its recorded steps', async () => {
    const run = await killMidRun('fresh', false);
    const taker = spawn(run.storeUrl, run.log);
    await taker.ready;
    await expectTakenOver(run, taker);
  }, 60_000);

  it('is taken over by a worker that was up all along', async () => {
    const run = await killMidRun('surviving', true);
    await expectTakenOver(run, run.other!);
  }, 60_000);
});
