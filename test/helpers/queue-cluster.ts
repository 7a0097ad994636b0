import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { startPrivateRedis, type PrivateRedis } from '../fixtures/store/private-redis.js';
import { REPO } from './run-cli.js';

// Real processes for the queue tests: a private redis-server (never the shared 6379;
// no persistence, so a restart comes back empty) and `toolchain worker` child processes.

export const BIN = join(REPO, 'bin', 'toolchain.js');
export const FIXTURE = join(REPO, 'test', 'fixtures', 'queue');

/** A private Redis for one test file; throws (never skips) when redis-server is not installed. */
export async function privateQueueRedis(): Promise<PrivateRedis> {
  try {
    execFileSync('redis-server', ['--version']);
  } catch {
    throw new Error('redis-server is not installed: the queue tests need it (apt-get install -y redis-server)');
  }
  return startPrivateRedis(['--appendonly', 'no']);
}

export interface WorkerProcess {
  readonly pid: number;
  /** Resolves once the worker said it is ready. */
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
  stderr(): string;
  kill(signal: NodeJS.Signals): void;
}

export interface WorkerSpec {
  readonly queue: string;
  readonly chains?: string;
  readonly plugins?: string;
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
}

export function startWorker(spec: WorkerSpec): WorkerProcess {
  const args = [BIN, '--chains', spec.chains ?? join(FIXTURE, 'chains'), '--plugins', spec.plugins ?? join(FIXTURE, 'plugins'), 'worker', '--queue', spec.queue, ...(spec.args ?? [])];
  const child = spawn(process.execPath, args, { cwd: REPO, env: { ...process.env, ...spec.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let readyNow: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (readyNow = resolve));
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.includes('ready:')) readyNow();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(() => readyNow());
  return { pid: child.pid!, ready, exited, stderr: () => err, kill: (signal) => child.kill(signal) };
}

/** One test file's cluster: a private Redis, a submitting engine, a scratch folder, its workers. */
export interface QueueCluster {
  readonly redis: PrivateRedis;
  readonly engine: Engine;
  readonly root: string;
  /** A worker on this cluster's queue with the fixture chains; `--stalled-interval 1s` first. */
  spawn(args?: readonly string[], env?: Record<string, string>): WorkerProcess;
}

/**
 * Registers the hooks that start and stop a cluster for the calling test file. Workers are
 * SIGKILLed after each test (`perTest`) or once at the end. Every worker of a queue gets one
 * stalled interval: BullMQ's stalled check runs once per interval cluster-wide.
 */
export function useQueueCluster(name: string, { perTest = true } = {}): QueueCluster {
  const root = mkdtempSync(join(tmpdir(), `toolchain-${name}-`));
  let redis: PrivateRedis | undefined;
  let engine: Engine | undefined;
  let workers: WorkerProcess[] = [];
  const killAll = async (): Promise<void> => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    workers = [];
  };
  beforeAll(async () => {
    redis = await privateQueueRedis();
    engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
  });
  if (perTest) afterEach(killAll);
  afterAll(async () => {
    await killAll();
    await engine?.close();
    await redis?.destroy();
    rmSync(root, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the queue cluster is used before its beforeAll ran');
    return value;
  };
  return {
    get redis() {
      return started(redis);
    },
    get engine() {
      return started(engine);
    },
    root,
    spawn(args = [], env = {}) {
      const w = startWorker({ queue: started(redis).url, args: ['--stalled-interval', '1s', ...args], env });
      workers.push(w);
      return w;
    },
  };
}

export interface Effect {
  readonly key: string;
  readonly pid: number;
  /** When the call started and ended (ms since the epoch). */
  readonly t0: number;
  readonly t1: number;
}

export function readEffects(file: string): Effect[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Effect);
  } catch {
    return [];
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or `ms` pass; throws with `what` when time runs out. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000, every = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}
