import type { Queue, QueueEvents } from 'bullmq';
import type { Redis as RedisClient } from 'ioredis';
import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { Clock } from '../common/clock.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunResult } from '../run-model/result.js';
import { asStoreError } from '../runs/group-recorder.js';
import { keepResults, rerunOrigin, type Rerun } from '../runs/rerun.js';
import { QUEUED_OWNER } from '../runs/owner.js';
import { runIdConflict } from '../runs/run-id-conflict.js';
import { storedResult } from '../runs/stored-result.js';
import type { RunStore, StoredRun } from '../store/types.js';
import { publishCancel } from './cancel-channel.js';
import { readNews, type RunNews } from './run-news.js';
import { importBullMQ, producerConnection, unavailable, workerConnection, type QueueAddress } from './connection.js';
import { checkRunId, encodeJob, JOB_OPTIONS, type JobKind } from './job-codec.js';

// The submitting side of the queue: a run is created in the store first (input, chain hash;
// owner `queued`, whose lease has run out already, so that the reconciler can enqueue it again
// if Redis loses its job), then its job is added with the run id as job id. Waiting for the
// result listens to the queue's events and, because events are lost when Redis restarts, also
// reads the store once a second; the result is always the store's, so it is the same RunResult
// wherever the run executed.

/** How long a re-run being recorded is held from the reconciler and recovery (a worker claims it at once all the same). */
const SETUP_LEASE_MS = 30_000;
const POLL_MS = 1_000;

export interface Submission {
  readonly runId: string;
  /** Resolves when the run finished (with the RunResult a local run gives); a signal that fires cancels the run. */
  result(signal?: AbortSignal): Promise<RunResult>;
}

/** Hears a followed run's events (and for_each progress) as its worker sends them. */
export type NewsListener = (news: RunNews) => void;

interface Waiter {
  /** The run's epoch when it was (re)submitted: a finish under it or an older one is the last execution's. */
  readonly since: number;
  readonly resolve: (result: RunResult) => void;
}

export class QueueSubmitter {
  private events: Promise<QueueEvents> | undefined;
  /** The events' own connection (BullMQ closes only connections it made itself). */
  private eventsRedis: RedisClient | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Who hears a run's events as its worker sends them (run-news.ts), by run id. */
  private readonly followers = new Map<string, Set<NewsListener>>();
  private timer: ReturnType<typeof setInterval> | undefined;

  private constructor(
    private readonly address: QueueAddress,
    private readonly queue: Queue,
    private readonly redis: RedisClient,
    private readonly store: RunStore,
    private readonly clock: Clock,
  ) {}

  static async open(address: QueueAddress, store: RunStore, clock: Clock): Promise<QueueSubmitter> {
    const { Queue } = await importBullMQ();
    const redis = await producerConnection(address);
    const queue = new Queue(address.name, { connection: redis });
    queue.on('error', () => undefined); // each call reports its own failure
    return new QueueSubmitter(address, queue, redis, store, clock);
  }

  /**
   * Records the run and enqueues it; a run id naming a finished run is answered from the store.
   * With `follow`, the worker sends the run's events, and `follow` hears them until `unfollow`.
   */
  async submit(plan: ChainPlan, input: unknown, runId: string, follow?: NewsListener): Promise<Submission> {
    checkRunId(runId);
    const now = this.clock.now();
    const outcome = await this.store.createRun({ id: runId, chain: plan.name, chain_hash: plan.hash, input: jsonCopy(input), owner: QUEUED_OWNER, lease_until: now - 1, now, queue: this.address.name }).catch((e: unknown) => {
      throw asStoreError(e, this.store.url);
    });
    // An id that names a finished run returns its result; one still running is waited for.
    if (!outcome.created) {
      const conflict = runIdConflict(outcome.run, plan.name, jsonCopy(input));
      if (conflict) throw conflict;
    }
    if (outcome.created || outcome.run.status === 'running') await this.enqueue(runId, 'run', outcome.run.chain, outcome.run.chain_hash, false, follow);
    return this.submission(runId, 0);
  }

  /**
   * Records a re-run — its origin, and the origin's results it keeps — and enqueues it: a worker
   * executes the rest, as it resumes a run. Until the kept results are written the run's lease
   * is held, so that no reconciler or recovery takes it up without them.
   */
  async rerun(r: Rerun, runId: string, follow?: NewsListener): Promise<Submission> {
    checkRunId(runId);
    const now = this.clock.now();
    try {
      await keepResults(this.store, await this.store.createRun({ id: runId, chain: r.plan.name, chain_hash: r.plan.hash, input: jsonCopy(r.input), owner: QUEUED_OWNER, lease_until: now + SETUP_LEASE_MS, now, queue: this.address.name, ...rerunOrigin(r) }), r);
    } catch (error) {
      throw asStoreError(error, this.store.url);
    }
    await this.enqueue(runId, 'run', r.plan.name, r.plan.hash, false, follow);
    return this.submission(runId, 0);
  }

  /** Continues (or redrives) a recorded run on the workers. */
  async resume(runId: string, allowChanged: boolean, follow?: NewsListener): Promise<Submission> {
    const run = await this.store.getRun(runId).catch((e: unknown) => {
      throw asStoreError(e, this.store.url);
    });
    if (run === undefined) throw new ToolchainError('RUN_NOT_FOUND', `no run ${runId} in the run store ${this.store.url}`);
    if (run.status === 'succeeded') return this.submission(runId, 0);
    // The job of the run's last execution is kept a while (removeOnComplete); a new one needs its id.
    const old = await this.queue.getJob(runId);
    if (old && run.status !== 'running') await old.remove().catch(() => undefined);
    await this.enqueue(runId, 'resume', run.chain, run.chain_hash, allowChanged, follow);
    // Its worker claims it (a new epoch) before it can finish again.
    return this.submission(runId, run.status === 'running' ? 0 : run.epoch);
  }

  /** Asks the run to stop: the store's flag, and a message to the worker that runs it now. */
  async cancel(runId: string): Promise<StoredRun | undefined> {
    const run = await this.store.requestCancel(runId, this.clock.now());
    await publishCancel(this.redis, this.address.name, runId).catch(() => undefined); // the flag alone stops it within a lease renewal
    return run;
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    const events = await this.events?.catch(() => undefined);
    await events?.close().catch(() => undefined);
    this.eventsRedis?.disconnect();
    await this.queue.close().catch(() => undefined);
    this.redis.disconnect();
  }

  private async enqueue(runId: string, kind: JobKind, chain: string, hash: string, allowChanged: boolean, follow: NewsListener | undefined): Promise<void> {
    if (follow !== undefined) {
      // Listening before the job exists: a worker may take it and send its first events at once.
      await this.openEvents();
      const set = this.followers.get(runId) ?? new Set();
      this.followers.set(runId, set.add(follow));
    }
    try {
      await this.queue.add('run', encodeJob({ kind, chain, hash, allowChanged, events: follow !== undefined }), { ...JOB_OPTIONS, jobId: runId });
    } catch (error) {
      if (follow !== undefined) this.unfollow(runId, follow);
      throw unavailable(this.address, error);
    }
  }

  /** `follow` hears no more of the run's events. */
  unfollow(runId: string, follow: NewsListener): void {
    const set = this.followers.get(runId);
    set?.delete(follow);
    if (set?.size === 0) this.followers.delete(runId);
  }

  private submission(runId: string, since: number): Submission {
    return { runId, result: (signal) => this.wait(runId, since, signal) };
  }

  private async wait(runId: string, since: number, signal: AbortSignal | undefined): Promise<RunResult> {
    await this.listen();
    return new Promise<RunResult>((resolve) => {
      const onAbort = (): void => void this.cancel(runId).catch(() => undefined);
      // Aborted while the run was being submitted or the queue's events opened: an abort event
      // has already fired, and listening now would lose the cancel.
      if (signal?.aborted === true) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      const waiter: Waiter = {
        since,
        resolve: (result) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(result);
        },
      };
      const set = this.waiters.get(runId) ?? new Set();
      set.add(waiter);
      this.waiters.set(runId, set);
      void this.check(runId);
    });
  }

  /** The queue's events, once, and the store poll that covers what they miss. */
  private async listen(): Promise<void> {
    await this.openEvents();
    this.timer ??= setInterval(() => {
      for (const runId of this.waiters.keys()) void this.check(runId);
    }, POLL_MS);
  }

  private async openEvents(): Promise<void> {
    this.events ??= (async () => {
      const { QueueEvents } = await importBullMQ();
      this.eventsRedis = await workerConnection(this.address);
      const events = new QueueEvents(this.address.name, { connection: this.eventsRedis });
      events.on('error', () => undefined); // it reconnects; the store poll covers the gap
      events.on('completed', ({ jobId }) => void this.check(jobId));
      events.on('failed', ({ jobId, failedReason }) => void this.check(jobId, failedReason));
      events.on('progress', ({ jobId, data }) => {
        const news = this.followers.has(jobId) ? readNews(data) : undefined;
        if (news !== undefined) for (const follow of this.followers.get(jobId) ?? []) follow(news);
      });
      await events.waitUntilReady();
      return events;
    })();
    await this.events;
  }

  /** Resolves the run's waiters if the store says it finished (or its job failed for good). */
  private async check(runId: string, failedReason?: string): Promise<void> {
    const set = this.waiters.get(runId);
    if (set === undefined) return;
    let run: StoredRun | undefined;
    try {
      run = await this.store.getRun(runId);
    } catch {
      return; // the store is away: the next poll tries again
    }
    let result: RunResult | undefined;
    // A run parked on a wait has not finished: its waiters wait on (a worker continues it when woken).
    const finishedEpoch = run !== undefined && run.status !== 'running' && run.status !== 'waiting' ? run.epoch : undefined;
    if (run !== undefined && finishedEpoch !== undefined) result = storedResult(run, await this.store.getSteps(runId).catch(() => []));
    else if (failedReason !== undefined) result = jobFailed(runId, run, 'QUEUE_JOB_FAILED', `run ${runId}'s job failed on the workers after ${JOB_OPTIONS.attempts} tries: ${failedReason}; resume it with 'toolchain resume ${runId} --queue URL'`);
    if (result === undefined) return;
    for (const waiter of set) {
      if (finishedEpoch !== undefined && finishedEpoch <= waiter.since) continue;
      set.delete(waiter);
      waiter.resolve(result);
    }
    if (set.size === 0) this.waiters.delete(runId);
    if (this.waiters.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function jobFailed(runId: string, run: StoredRun | undefined, code: ErrorCode, message: string): RunResult {
  return { run_id: runId, chain: run?.chain ?? '', status: 'failed', outputs: null, error: { code, message }, steps: {}, duration_ms: 0 };
}

function jsonCopy(input: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(input ?? {})) as unknown;
  } catch (error) {
    throw new ToolchainError('INPUT_INVALID', `the input cannot be recorded as JSON: ${(error as Error).message}`);
  }
}
