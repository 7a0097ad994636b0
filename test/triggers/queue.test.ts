import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, type JobSchedulerJson } from 'bullmq';
import { Cron } from 'croner';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import type { PrivateRedis } from '../fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, sleep, startWorker, until, type WorkerProcess } from '../helpers/queue-cluster.js';
import { runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// Triggers on a queue: real `toolchain worker` (and `serve --queue`) processes on a private Redis,
// which is also the run store. Their chains' triggers are BullMQ job schedulers on the queue's
// triggers queue (`toolchain~triggers`), one per trigger however many processes upsert them; each
// tick job is taken by one process, which fires the tick's run into the queue under the id the
// tick names. Killing a process loses no tick, removing a chain removes its schedulers, and a tick
// job taken long after its time (every process was stopped) follows `catchup`. Event triggers
// on a queue: events a `toolchain emit` process records start one queued run each, under job ids
// the event ids give (a colon in one made into a hash: BullMQ refuses it).

const TRIGGERS_QUEUE = 'toolchain~triggers';
const root = mkdtempSync(join(tmpdir(), 'toolchain-triggers-queue-'));
let redis: PrivateRedis;
let connection: Redis;
let triggersQueue: Queue;
let processes: { kill(signal: NodeJS.Signals): void; exited: Promise<unknown> }[] = [];

beforeAll(async () => {
  redis = await privateQueueRedis();
  connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  triggersQueue = new Queue(TRIGGERS_QUEUE, { connection });
});
afterEach(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
  processes = [];
  await connection.flushall();
});
afterAll(async () => {
  await triggersQueue.close();
  connection.disconnect();
  await redis.destroy();
  rmSync(root, { recursive: true, force: true });
});

function project(name: string, chains: Record<string, string>): { dir: string; chains: string } {
  const dir = join(root, name);
  mkdirSync(join(dir, 'chains'), { recursive: true });
  for (const [file, text] of Object.entries(chains)) writeFileSync(join(dir, 'chains', file), text);
  return { dir, chains: join(dir, 'chains') };
}

function worker(chains: string): WorkerProcess {
  const w = startWorker({ queue: redis.url, chains, plugins: join(FIXTURE, 'plugins'), args: ['--stalled-interval', '1s'], env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
  processes.push(w);
  return w;
}

async function serve(dir: string): Promise<ServeProcess> {
  const s = await startServe({ cwd: dir, globals: ['--chains', join(dir, 'chains'), '--plugins', join(FIXTURE, 'plugins')], args: ['--queue', redis.url], env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
  const exited = new Promise<unknown>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(s.pid, 0);
      } catch {
        clearInterval(poll);
        resolve(undefined);
      }
    }, 50);
  });
  processes.push({ kill: (signal) => void (isRunning(s.pid) && process.kill(s.pid, signal)), exited });
  return s;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function stop(w: WorkerProcess): Promise<unknown> {
  w.kill('SIGINT');
  return w.exited;
}

/** The ticks of a trigger's runs in the store, ascending. */
async function ticksOf(chain: string, trigger: string): Promise<{ ticks: number[]; runs: { id: string; status: string; queue?: string | null }[] }> {
  const store = await openStore(redis.url);
  try {
    const prefix = `${chain}#${trigger}@`;
    const runs = (await store.listRuns({ chain, limit: 1000 })).filter((r) => r.id.startsWith(prefix));
    const ticks = runs
      .map((r) => {
        const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(r.id.slice(prefix.length));
        expect(m, r.id).not.toBeNull();
        return Date.parse(`${m![1]}-${m![2]}-${m![3]}T${m![4]}:${m![5]}:${m![6]}Z`);
      })
      .sort((a, b) => a - b);
    return { ticks, runs };
  } finally {
    await store.close();
  }
}

async function schedulers(): Promise<Map<string, JobSchedulerJson>> {
  return new Map((await triggersQueue.getJobSchedulers(0, -1, true)).map((j) => [j.key, j]));
}

const WORK = 'steps:\n  - name: w\n    tool: work\n    input_map: { value: 1, ms: 5 }\n';

describe('three workers on one queue with an every: 1s trigger', () => {
  it('one job scheduler; one queued run per tick over 15 s; none lost or doubled with a worker killed half-way', async () => {
    const { chains } = project('three', { 'tick.yaml': `name: tick\ntriggers:\n  - every: 1s\n    overlap: allow\n${WORK}` });
    const first = worker(chains);
    await first.ready;
    // The trigger starts from the first worker's start: count the seconds from then.
    const startedAt = Date.now();
    const [second, third] = [worker(chains), worker(chains)];
    await Promise.all([second.ready, third.ready]);
    // Three processes upserted it: one scheduler, one next job.
    const listed = await schedulers();
    expect([...listed.keys()]).toEqual(['tick#1']);
    expect(listed.get('tick#1')).toMatchObject({ name: 'tick', every: 1000 });

    await sleep(startedAt + 7_500 - Date.now());
    second.kill('SIGKILL');
    await second.exited;
    await sleep(startedAt + 15_000 - Date.now());
    const stoppedAt = Date.now();
    await Promise.all([stop(first), stop(third)]);

    const { ticks, runs } = await ticksOf('tick', '1');
    // No tick twice, none missing between the first and the last, and as many as seconds went by (± one at either edge).
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.slice(1).filter((t, i) => t - ticks[i]! !== 1000)).toEqual([]);
    const elapsed = Math.floor(stoppedAt / 1000) - Math.floor(startedAt / 1000);
    expect(elapsed).toBeGreaterThanOrEqual(15);
    expect(Math.abs(ticks.length - elapsed)).toBeLessThanOrEqual(1);
    // Each went through the queue, and the workers executed them.
    expect(new Set(runs.map((r) => r.queue))).toEqual(new Set(['toolchain']));
    expect(runs.filter((r) => r.status === 'succeeded').length).toBeGreaterThanOrEqual(runs.length - 1);
    // Each tick was fired by one process, the one that took its tick job (the killed one may have
    // died between starting a run and saying so).
    const fired = [first, second, third].map((w) => (w.stderr().match(/trigger:fired tick#1@/g) ?? []).length);
    const total = fired.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(runs.length);
    expect(total).toBeGreaterThanOrEqual(runs.length - 1);
    expect(fired.filter((n) => n > 0).length).toBeGreaterThan(1);
  }, 90_000);
});

describe('the job schedulers follow the chains', () => {
  it('one per enabled trigger with a worker and serve --queue both upserting; a removed chain leaves none; an edit reschedules; serve fires alone', async () => {
    const { dir, chains } = project('schedulers', {
      'a.yaml': `name: a\ntriggers:\n  - every: 1s\n    overlap: allow\n  - schedule: "0 6 15W * *"\n    timezone: Europe/Paris\n    id: nightly\n  - every: 1h\n    id: off\n    enabled: false\n${WORK}`,
      'b.yaml': `name: b\ntriggers:\n  - every: 2s\n    overlap: allow\n${WORK}`,
    });
    const w = worker(chains);
    const [s] = await Promise.all([serve(dir), w.ready]);
    const listed = await schedulers();
    expect([...listed.keys()].sort()).toEqual(['a#1', 'a#nightly', 'b#1']);
    expect(listed.get('a#1')).toMatchObject({ name: 'tick', every: 1000, template: { data: { v: 1, chain: 'a', trigger: '1' } } });
    expect(listed.get('b#1')).toMatchObject({ every: 2000 });
    // `every` keeps to the multiples of its interval since the epoch.
    expect(listed.get('a#1')!.next! % 1000).toBe(0);
    expect(listed.get('b#1')!.next! % 2000).toBe(0);
    // The cron's next time is croner's, in its zone (BullMQ's own cron-parser refuses `W`).
    const nightly = listed.get('a#nightly')!;
    expect(nightly).toMatchObject({ pattern: '0 6 15W * *', tz: 'Europe/Paris' });
    expect(nightly.next).toBe(new Cron('0 6 15W * *', { timezone: 'Europe/Paris', paused: true }).nextRun()!.getTime());
    // Two processes upserted each: one next job each.
    const delayed = (await triggersQueue.getDelayed()).map((j) => j.id!);
    expect(delayed.filter((id) => id.startsWith('repeat:a#nightly:'))).toEqual([`repeat:a#nightly:${nightly.next}`]);

    await until('a run of b', async () => (await ticksOf('b', '1')).ticks.length > 0);
    unlinkSync(join(chains, 'b.yaml'));
    await until("b's scheduler removed", async () => !(await schedulers()).has('b#1'), 10_000);
    expect([...(await schedulers()).keys()].sort()).toEqual(['a#1', 'a#nightly']);
    expect(await connection.exists('toolchain~triggers:state:b#1')).toBe(0);
    const left = (await triggersQueue.getJobs(['delayed', 'wait', 'prioritized'])).map((j) => j.id!);
    expect(left.filter((id) => id.includes('b#1'))).toEqual([]);
    await sleep(500);
    const bRuns = (await ticksOf('b', '1')).ticks.length;
    await sleep(3_000);
    expect((await ticksOf('b', '1')).ticks.length).toBe(bRuns);

    writeFileSync(join(chains, 'a.yaml'), `name: a\ntriggers:\n  - every: 3s\n    overlap: allow\n  - schedule: "0 6 15W * *"\n    timezone: Europe/Paris\n    id: nightly\n${WORK}`);
    await until('a#1 rescheduled', async () => (await schedulers()).get('a#1')?.every === 3000, 10_000);
    expect((await schedulers()).get('a#1')!.next! % 3000).toBe(0);

    // With the worker gone, serve takes the tick jobs: the runs are recorded and wait for a worker.
    await stop(w);
    const before = Math.max(...(await ticksOf('a', '1')).ticks);
    await until('a tick fired by serve', async () => (await ticksOf('a', '1')).ticks.some((t) => t > before + 1000), 15_000);
    const newest = Math.max(...(await ticksOf('a', '1')).ticks);
    const id = `a#1@${new Date(newest).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '')}`;
    await until('serve to log it', () => s.stdout().includes(`trigger:fired ${id}`), 5_000);
    await s.stop();
  }, 90_000);
});

describe('a tick job taken long after its time', () => {
  it('follows catchup: all fires every missed tick (one after the other), latest the newest, none none', async () => {
    const { chains } = project('catchup', {
      'late.yaml': `name: late\ntriggers:\n  - every: 10s\n    id: latest\n  - every: 10s\n    id: none\n    catchup: none\n  - every: 10s\n    id: all\n    catchup: all\n${WORK}`,
    });
    const ids = ['latest', 'none', 'all'] as const;
    const first = worker(chains);
    await first.ready;
    await until('a tick of each trigger', async () => (await Promise.all(ids.map((id) => ticksOf('late', id)))).every((r) => r.ticks.length > 0), 25_000, 200);
    await stop(first);
    const last = await Promise.all(ids.map(async (id) => Math.max(...(await ticksOf('late', id)).ticks)));
    expect(new Set(last).size).toBe(1);
    const L = last[0]!;

    // Every process stopped across two ticks (L+10 s and L+20 s): the job of L+10 s waits in Redis.
    await sleep(L + 22_000 - Date.now());
    const again = worker(chains);
    await again.ready;
    await until('the tick after the restart, for each', async () => (await Promise.all(ids.map((id) => ticksOf('late', id)))).every((r) => r.ticks.includes(L + 30_000)), 25_000, 200);
    await stop(again);

    const after = async (id: string): Promise<number[]> => (await ticksOf('late', id)).ticks.filter((t) => t >= L).map((t) => (t - L) / 1000);
    expect(await after('all')).toEqual([0, 10, 20, 30]);
    expect(await after('latest')).toEqual([0, 20, 30]);
    expect(await after('none')).toEqual([0, 30]);
    // `all` fired its second missed tick only once the first one's run had ended (overlap: skip).
    const store = await openStore(redis.url);
    try {
      const name = (t: number): string => `late#all@${new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '')}`;
      const one = await store.getRun(name(L + 10_000));
      const two = await store.getRun(name(L + 20_000));
      expect(one?.status).toBe('succeeded');
      expect(two!.created_at).toBeGreaterThanOrEqual(one!.finished_at!);
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe('workers fire an event trigger into their queue', () => {
  it('one queued run per event recorded by toolchain emit, an id with a colon included', async () => {
    const { chains } = project('events', {
      'orders.yaml': 'name: orders\ninputs:\n  n: { type: integer, default: 0 }\ntriggers:\n  - event: order.created\n    input_map: { n: $.event.payload.n }\nsteps:\n  - name: w\n    tool: work\n    input_map: { value: $.n, ms: 5 }\n',
    });
    const pair = [worker(chains), worker(chains)];
    await Promise.all(pair.map((w) => w.ready));
    const env = { TOOLCHAIN_CACHE_DIR: join(root, 'cache') };
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
    }
  }, 60_000);
});
