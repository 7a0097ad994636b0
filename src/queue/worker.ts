import type { Job, Queue, Worker } from 'bullmq';
import type { Redis as RedisClient } from 'ioredis';
import type { Clock } from '../common/clock.js';
import type { ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunResult } from '../run-model/result.js';
import { dispatchBatch, ElementSources, isElementJob, parentDistributor, processElement, type ElementCaller } from './distribute.js';
import { QUEUED_OWNER } from '../runs/owner.js';
import { withPlumbing, type InternalStartOptions } from '../runs/start-options.js';
import type { RunStore, StoredRun } from '../store/types.js';
import { subscribeCancel } from './cancel-channel.js';
import { importBullMQ, parseQueueUrl, workerConnection } from './connection.js';
import { decodeJob, encodeJob, JOB_OPTIONS, type RunJob } from './job-codec.js';
import { memoryPolicyWarning } from './memory-policy.js';
import { reconcile } from './reconciler.js';
import { takeOverDeadWorkers } from './takeover.js';
import { newsReporter } from './run-news.js';
import { leftWaiting, Waker } from '../runs/waker.js';

// The executing side of the queue: a BullMQ worker whose processor executes a job's run with the
// normal engine, taking the run over in the shared store (a new epoch, which fences any earlier
// owner), so that a run whose worker died resumes from its recorded steps. Whatever the engine
// says — succeeded, failed, cancelled, refused — is the job's (successful) result; the processor
// throws only when it could not do its work at all (the store is unreachable), which is what
// BullMQ's retries are for. A run whose worker died (the store says its owner is gone) goes back
// to the waiting list at once (takeover.ts), not after BullMQ's stalled check.

/** How often a worker looks for runs whose worker died. */
const TAKEOVER_INTERVAL_MS = 1_000;

export interface QueueWorkerOptions {
  /** `redis://HOST:PORT[/DB][?queue=NAME]`. */
  readonly queue: string;
  /** Runs executing at once in this worker (default 8). */
  readonly concurrency?: number;
  /**
   * How often BullMQ looks for jobs whose worker died, and how long a worker's lock lasts without
   * renewal (default 30 s). A run whose owner the store shows dead is taken over sooner, within
   * a second (its process is gone from this machine, or its lease ran out); this is for the rest.
   */
  readonly stalledIntervalMs?: number;
  /** How often the reconciler looks for running runs whose job Redis lost (default 30 s). */
  readonly reconcileIntervalMs?: number;
  /** False: no reconciler (runs whose job was lost wait for `resume`); a dead worker's jobs still go to live workers. */
  readonly recover?: boolean;
  /** How often to look for waiting runs of the queue whose wait is over (default 1 s). */
  readonly wakeIntervalMs?: number;
  /** Warnings and notes (a Redis that may evict, runs enqueued again). */
  readonly onNotice?: (line: string) => void;
}

/** What a worker needs of the engine that executes its runs. */
export interface WorkerEngine extends ElementCaller {
  chain(name: string): ChainPlan | undefined;
  /** Takes the engine's own options: the worker attaches its plumbing (withPlumbing), which no public caller can. */
  resume(runId: string, options?: InternalStartOptions): Promise<RunResult>;
  cancel(runId: string): Promise<boolean>;
}

export interface QueueWorker {
  /** Runs executing here now. */
  active(): number;
  /**
   * Stops taking runs and waits up to `graceMs` for those executing; true if they all finished.
   * Runs still executing then are released: their lock lapses and another worker resumes them.
   */
  close(graceMs?: number): Promise<boolean>;
}

/** Refuses anything a run's record says must not run here; the job is answered without executing. */
type Refusal = { readonly code: ErrorCode; readonly message: string } | undefined;

export async function startQueueWorker(engine: WorkerEngine, store: RunStore, clock: Clock, options: QueueWorkerOptions): Promise<QueueWorker> {
  const address = parseQueueUrl(options.queue);
  const notice = options.onNotice ?? ((): void => undefined);
  const { Worker: WorkerClass, Queue: QueueClass, WaitingChildrenError } = await importBullMQ();
  const connection = await workerConnection(address);
  const warning = await memoryPolicyWarning(connection, address.display);
  if (warning !== undefined) notice(`warning: ${warning}`);
  let running = 0;

  async function refuse(run: StoredRun, status: 'failed' | 'cancelled', error: { code: ErrorCode; message: string }): Promise<string> {
    const now = clock.now();
    const claim = await store.claimRun(run.id, { owner: QUEUED_OWNER, lease_until: now - 1, now, expected_epoch: run.epoch, queue: address.name });
    if (!claim.claimed) throw new Error(`run ${run.id} changed while this worker refused it`); // BullMQ tries again
    await store.finishRun(run.id, claim.run.epoch, { status, outputs: null, error, finished_at: now });
    return status;
  }

  function refusal(job: RunJob, run: StoredRun): Refusal {
    const plan = engine.chain(job.chain);
    if (plan === undefined) return { code: 'CHAIN_NOT_FOUND', message: `run ${run.id}: this worker has no chain '${job.chain}'; add it to the worker's chains folder, then resume the run` };
    if (plan.hash !== job.hash && job.allowChanged !== true) {
      return {
        code: 'CHAIN_CHANGED',
        message: `run ${run.id}: chain '${job.chain}' on this worker (hash ${plan.hash.slice(0, 12)}) is not the one submitted (hash ${job.hash.slice(0, 12)}); give the workers the same chains folder, then 'toolchain resume ${run.id} --queue URL'`,
      };
    }
    return undefined;
  }

  /** Elements executing here, by run: a cancel aborts them. */
  const elements = new Map<string, Set<AbortController>>();
  const sources = new ElementSources();
  async function element(job: Job): Promise<unknown> {
    if (!isElementJob(job.data)) throw new Error(`job ${job.id}: not an element job`);
    const abort = new AbortController();
    const set = elements.get(job.data.runId) ?? new Set();
    elements.set(job.data.runId, set.add(abort));
    try {
      return await processElement(engine, store, job.data, abort.signal, sources);
    } finally {
      set.delete(abort);
      if (set.size === 0) elements.delete(job.data.runId);
    }
  }

  async function handle(job: Job, token?: string): Promise<unknown> {
    if (job.name === 'element') return element(job);
    const runId = job.id!;
    const data = decodeJob(job.data, runId);
    const run = await store.getRun(runId);
    // The store forgot the run (a Redis store flushed with its queue): nothing to execute.
    if (run === undefined) return { status: 'missing' };
    if (run.status === 'succeeded' || (data.kind === 'run' && run.status !== 'running')) return { status: run.status };
    // Woken already by another worker's job (or cancelled meanwhile): nothing to do.
    if (data.kind === 'wake' && run.status !== 'waiting') return { status: run.status };
    const refused = refusal(data, run);
    if (refused !== undefined) return { status: await refuse(run, 'failed', refused) };
    if (run.status === 'running' && run.cancel_requested) return { status: await refuse(run, 'cancelled', { code: 'ABORTED', message: `run ${runId} was cancelled` }) };
    running++;
    try {
      const { distributor, batch } = await parentDistributor(job);
      const news = data.events === true ? newsReporter(job) : undefined;
      const wake = data.kind === 'wake' ? { wake: true, claimLive: false } : {};
      // untilWaiting: a run that parks on a wait frees this worker's slot; a waker puts it back on the queue.
      const result = await engine.resume(runId, withPlumbing({ untilWaiting: true, ...news, ...(data.allowChanged ? { allowChanged: true } : {}) }, { claimLive: true, queue: address.name, distributor, ...wake }));
      const parked = batch();
      if (result.error?.code === 'RUN_SUSPENDED' && parked !== undefined) {
        const now = await store.getRun(runId);
        const stepIndex = engine.chain(data.chain)?.steps.findIndex((s) => s.name === parked.step) ?? -1;
        const run = { id: runId, chain: data.chain, hash: data.hash, epoch: now?.epoch ?? 0, stepIndex };
        if (await dispatchBatch(queue, job, token!, run, parked.step, parked.elements)) throw new WaitingChildrenError();
        // The children were done already: BullMQ leaves the job with this worker; resume at once.
        return await handle(job, token);
      }
      // Another execution of this run is in this process still (its lock was lost, then given back here): later.
      if (result.error?.code === 'RUN_IN_PROGRESS' || result.error?.code === 'STORE_UNAVAILABLE') throw new Error(result.error.message);
      if (result.error?.code === 'STORE_FENCED') notice(`run ${runId}: STORE_FENCED, another worker took it over (this one lost its lock); stopped here`);
      return { status: result.status };
    } finally {
      running--;
    }
  }

  const queue: Queue = new QueueClass(address.name, { connection });
  queue.on('error', () => undefined);
  const stalledInterval = options.stalledIntervalMs ?? 30_000;
  const worker: Worker = new WorkerClass(address.name, handle, {
    connection,
    concurrency: options.concurrency ?? 8,
    stalledInterval,
    lockDuration: stalledInterval,
    // A run may be cut short by several dead workers in a row; each time it resumes from its steps.
    maxStalledCount: 100,
  });
  worker.on('error', () => undefined); // connection trouble: ioredis reconnects, BullMQ carries on

  const subscriber = connection.duplicate();
  subscriber.on('error', () => undefined);
  await subscribeCancel(subscriber, address.name, (runId) => {
    void engine.cancel(runId).catch(() => undefined);
    for (const abort of elements.get(runId) ?? []) abort.abort();
  });
  const pass = async (): Promise<void> => {
    try {
      const again = await reconcile(queue, store, clock);
      if (again.length > 0) notice(`enqueued again ${again.length} running run(s) whose job the queue had lost`);
    } catch {
      // Redis or the store is away: the next pass tries again.
    }
  };
  const recover = options.recover !== false;
  if (recover) await pass();
  const timer = setInterval(() => void (recover && pass()), options.reconcileIntervalMs ?? 30_000);
  timer.unref();
  let lookingForDead = false;
  const takeOver = async (): Promise<void> => {
    if (lookingForDead) return;
    lookingForDead = true;
    try {
      const moved = await takeOverDeadWorkers(queue, connection, store, clock);
      if (moved.length > 0) notice(`took over ${moved.length} run(s) whose worker died: ${moved.join(', ')}`);
    } catch {
      // Redis or the store is away: the next pass tries again.
    } finally {
      lookingForDead = false;
    }
  };
  await takeOver();
  const deadTimer = setInterval(() => void takeOver(), TAKEOVER_INTERVAL_MS);
  deadTimer.unref();

  // Waiting runs of this queue whose wait is over go back on the queue, so that any worker
  // continues them: a job of kind 'wake' (its id the run's, as every job of a run).
  const waker = new Waker({
    store,
    clock,
    scope: 'all',
    intervalMs: options.wakeIntervalMs ?? 1_000,
    async wake(run) {
      if (run.queue !== address.name) return leftWaiting(run, 'RUN_WAITING', `run ${run.id} goes back to its queue`);
      const old = await queue.getJob(run.id);
      if (old !== undefined) {
        const state = await old.getState();
        if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return leftWaiting(run, 'RUN_WAITING', `run ${run.id} goes back to its queue`); // its wake job is on its way
        await old.remove().catch(() => undefined);
      }
      await queue.add('run', encodeJob({ kind: 'wake', chain: run.chain, hash: run.chain_hash }), { ...JOB_OPTIONS, jobId: run.id });
      return leftWaiting(run, 'RUN_WAITING', `run ${run.id} goes back to its queue`);
    },
    onError: () => undefined, // Redis or the store is away: the next look tries again
  });
  await waker.start();

  return {
    active: () => running,
    async close(graceMs = 30_000) {
      clearInterval(timer);
      clearInterval(deadTimer);
      waker.close();
      let grace: ReturnType<typeof setTimeout> | undefined;
      const inTime = await Promise.race([worker.close().then(() => true), new Promise<boolean>((r) => (grace = setTimeout(() => r(false), graceMs)))]);
      clearTimeout(grace);
      // Runs still executing: their locks lapse, and another worker resumes them.
      if (!inTime) await worker.close(true).catch(() => undefined);
      subscriber.disconnect();
      await queue.close().catch(() => undefined);
      connection.disconnect();
      return inTime;
    },
  };
}
