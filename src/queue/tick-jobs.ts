import type { Job, Queue, Worker } from 'bullmq';
import type { Clock } from '../common/clock.js';
import type { ChainPlan, TriggerPlan } from '../compiler/plan.js';
import type { RunStore } from '../store/types.js';
import { MAX_CATCHUP, TriggerScheduler, type FireOutcome, type TriggerEvent, type TriggerState } from '../triggers/scheduler.js';
import { nextTicks, scheduleFingerprint, tickOfRun, ticksBetween, triggerPrefix, isTicking, tickingTriggers } from '../triggers/ticks.js';
import { importBullMQ, workerConnection, type QueueAddress } from './connection.js';
import { cronerRepeatStrategy, decodeTickJob, LOOK_JOB, schedulerId, syncJobSchedulers, tickJobData, TICK_JOB_OPTIONS, triggersQueueName, type DeclaredTrigger } from './job-schedulers.js';
import { TriggerStates } from './trigger-state.js';

// Triggers with a queue: every process that fires triggers on it (workers, `serve --queue`, an
// engine made with `queue` and `triggers`) keeps the queue's job schedulers matching its chains
// (job-schedulers.ts: at start, after each reload of the chains, and every 30 s in case Redis lost
// them) and takes the jobs they produce from the triggers queue. A tick job — whichever process
// takes it, whenever — is a look at its trigger with the logic of the in-process scheduler
// (TriggerScheduler: overlap, the ticks kept for later, one run per tick under its derived id,
// enqueued for the workers), from the state the processes share in Redis (trigger-state.ts),
// written back only if no other look wrote it meanwhile. So each tick is looked at by about one
// process instead of by every process at each of its looks, and a tick job lost with a killed
// process loses no tick: the next look takes in every tick since the last look.
//
// Missed ticks: when the oldest tick a look takes in is more than LATE_MS old, no process was
// there to take its job (they were all stopped, or Redis was away), and `catchup` says what
// becomes of the ticks since the last look, as for a process that starts after a pause. A trigger
// no process has looked at (no state) starts from the newest run of it in the store, or from now.
// Ticks kept for later (`overlap: queue`, `catchup: all`) are looked at again each second by a
// look job until they are fired, since no tick job may come for a long while.

/** A look whose oldest tick is older than this takes the ticks since the last look in as missed ones. */
export const LATE_MS = 10_000;
/** How often each process makes the schedulers match its chains, besides at start and on reload. */
const SYNC_INTERVAL_MS = 30_000;
/** Tick jobs looked at at once in one process. */
const CONCURRENCY = 4;
/** Runs of a chain read to find a trigger's newest run. */
const SCAN = 1_000;
/** Looks started again because another process wrote the state meanwhile. */
const TRIES = 5;
/** The state the in-process scheduler gives a disabled trigger: enabled again, it starts from then. */
const DISABLED = 'disabled';

export interface QueueTriggerSettings {
  readonly address: QueueAddress;
  readonly store: RunStore;
  readonly clock: Clock;
  /** The loaded plans, read at each look and each sync. */
  readonly plans: () => readonly ChainPlan[];
  /** Records and enqueues a tick's run. */
  readonly start: (plan: ChainPlan, input: unknown, runId: string) => Promise<FireOutcome>;
  readonly onEvent?: (event: TriggerEvent) => void;
}

export interface QueueTriggers {
  /** Makes the job schedulers match the loaded chains now (after a reload). */
  sync(): Promise<void>;
  /** Looks at every enabled trigger now, as its tick job would. */
  lookAll(): Promise<void>;
  close(): Promise<void>;
}

export async function startQueueTriggers(s: QueueTriggerSettings): Promise<QueueTriggers> {
  const { Queue: QueueClass, Worker: WorkerClass, UnrecoverableError } = await importBullMQ();
  const connection = await workerConnection(s.address);
  const name = triggersQueueName(s.address.name);
  const settings = { repeatStrategy: cronerRepeatStrategy() };
  const queue: Queue = new QueueClass(name, { connection, settings });
  queue.on('error', () => undefined); // each call reports its own failure
  const states = new TriggerStates(connection, s.address.name);
  let closed = false;

  function find(chain: string, id: string): DeclaredTrigger | undefined {
    const plan = s.plans().find((p) => p.name === chain);
    const trigger = plan?.triggers?.find((t) => t.id === id && isTicking(t));
    return plan && trigger ? { plan, trigger } : undefined;
  }

  /** What the store says of a trigger no process has a state of: from its newest run, or from now. */
  async function fromStore(plan: ChainPlan, t: TriggerPlan, now: number): Promise<TriggerState> {
    const prefix = triggerPrefix(plan.name, t);
    let last: number | undefined;
    for (const run of await s.store.listRuns({ chain: plan.name, limit: SCAN })) {
      const tick = tickOfRun(prefix, run.id);
      if (tick !== undefined && (last === undefined || tick > last)) last = tick;
    }
    return { fingerprint: scheduleFingerprint(t), last: last ?? now, pending: [], caughtUp: new Set<number>() };
  }

  async function look(plan: ChainPlan, t: TriggerPlan): Promise<void> {
    const id = schedulerId(plan.name, t);
    const key = triggerPrefix(plan.name, t);
    const only: ChainPlan = { ...plan, triggers: [t] };
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const loaded = await states.load(id);
      const now = s.clock.now();
      const state = loaded.state ?? (await fromStore(plan, t, now));
      if (state.fingerprint === scheduleFingerprint(t)) takeInMissed(t, state, now);
      const known = new Map([[key, state]]);
      // Dropped ticks are told once the look's outcome is written; a fired tick at once (its run exists whatever follows).
      const dropped: TriggerEvent[] = [];
      let failure: unknown;
      const scheduler = new TriggerScheduler({
        store: s.store,
        clock: s.clock,
        plans: () => [only],
        states: known,
        start: s.start,
        onEvent: (e) => (e.type === 'trigger:fired' ? s.onEvent?.(e) : dropped.push(e)),
        onError: (error) => (failure ??= error),
      });
      await scheduler.look();
      if (failure !== undefined) throw failure; // the job is tried again; the state read is left as it was
      const after = known.get(key);
      if (after === undefined) return;
      if (!(await states.save(id, loaded.version, after))) continue;
      for (const e of dropped) s.onEvent?.(e);
      if (after.pending.length > 0) await lookAgain(plan, t);
      return;
    }
    throw new Error(`trigger ${id}: other processes changed its state during ${TRIES} looks in a row`);
  }

  /** A look in a second or two; processes asking within the same second make one job. */
  async function lookAgain(plan: ChainPlan, t: TriggerPlan): Promise<void> {
    const now = Date.now(); // BullMQ's delays run on the real clock
    const at = (Math.floor(now / 1_000) + 2) * 1_000;
    await queue.add(LOOK_JOB, tickJobData(plan.name, t), { ...TICK_JOB_OPTIONS, jobId: `${schedulerId(plan.name, t)}~look~${at}`, delay: at - now });
  }

  /**
   * Before a trigger's scheduler is upserted, its state: a new trigger starts from now, one the
   * store has runs of from its newest (and is looked at at once, for the ticks missed since), an
   * edited schedule or a trigger enabled again from now, a disabled one is marked so.
   */
  async function ensureState(plan: ChainPlan, t: TriggerPlan): Promise<void> {
    const id = schedulerId(plan.name, t);
    const fingerprint = t.enabled ? scheduleFingerprint(t) : DISABLED;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const loaded = await states.load(id);
      if (loaded.state?.fingerprint === fingerprint) return;
      const now = s.clock.now();
      const fresh = { fingerprint, last: now, pending: [], caughtUp: new Set<number>() };
      const state = loaded.state === undefined && t.enabled ? await fromStore(plan, t, now) : fresh;
      if (!(await states.save(id, loaded.version, state))) continue;
      if (state.last < now) await look(plan, t); // from a run in the store: the ticks since may have been missed
      return;
    }
  }

  async function syncOnce(): Promise<void> {
    if (closed) return;
    const declared = tickingTriggers(s.plans());
    let failure: unknown;
    for (const d of declared) await ensureState(d.plan, d.trigger).catch((error: unknown) => (failure ??= error));
    const removed = await syncJobSchedulers(
      queue,
      declared.filter((d) => d.trigger.enabled),
    );
    // A disabled trigger keeps its state (so that enabling it starts it from then); a trigger no chain declares is forgotten.
    const known = new Set(declared.map((d) => schedulerId(d.plan.name, d.trigger)));
    for (const id of removed) if (!known.has(id)) await states.remove(id);
    if (failure !== undefined) throw failure;
  }
  const sync = serial(syncOnce);

  async function handle(job: Job): Promise<string> {
    const data = decodeTickJob(job.data);
    if (data === undefined) throw new UnrecoverableError(`job ${job.id}: expected { v: 1, chain, trigger }, got ${JSON.stringify(job.data)?.slice(0, 200)}`);
    const found = find(data.chain, data.trigger);
    // Its chain was removed or the trigger disabled: the next sync removes its scheduler, if no other process has done so.
    if (found === undefined || !found.trigger.enabled) return 'idle';
    await look(found.plan, found.trigger);
    return 'looked';
  }

  await sync().catch(() => undefined); // Redis or the store is away: the next sync tries again
  const worker: Worker = new WorkerClass(name, handle, { connection, concurrency: CONCURRENCY, settings });
  worker.on('error', () => undefined); // connection trouble: ioredis reconnects, BullMQ carries on
  const timer = setInterval(() => void sync().catch(() => undefined), SYNC_INTERVAL_MS);
  timer.unref();
  // Event triggers have no schedule: this process reads the store's events as a process without a
  // queue does (four times a second), and submits each event's run into the run queue.
  const events = new TriggerScheduler({ store: s.store, clock: s.clock, plans: s.plans, start: s.start, ticks: false, ...(s.onEvent ? { onEvent: s.onEvent } : {}), onError: () => undefined });
  void events.start();

  return {
    sync,
    async lookAll() {
      for (const { plan, trigger } of tickingTriggers(s.plans())) if (trigger.enabled) await look(plan, trigger);
      await events.look();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      events.close();
      await worker.close().catch(() => undefined);
      await sync().catch(() => undefined); // the one under way, if any, ends before its connection does
      await queue.close().catch(() => undefined);
      connection.disconnect();
    },
  };
}

/**
 * Ticks this look takes in that no process was there to take at their time: when the oldest is
 * more than LATE_MS old, the ticks since the last look are missed ones, and `catchup` picks those
 * that fire — as the in-process scheduler does for a process that starts after a pause.
 */
function takeInMissed(t: TriggerPlan, state: TriggerState, now: number): void {
  const oldest = nextTicks(t, state.last, 1)[0];
  if (oldest === undefined || oldest > now - LATE_MS) return;
  const missed = t.catchup === 'none' ? [] : ticksBetween(t, state.last, now, t.catchup === 'all' ? MAX_CATCHUP : 1);
  state.pending.push(...missed);
  if (t.catchup === 'all') for (const tick of missed) state.caughtUp.add(tick);
  state.last = now;
}

/** One call at a time; a call during one runs once after it, however often asked. */
function serial(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again: Promise<void> | undefined;
  const run = (): Promise<void> => {
    if (running) {
      again ??= running
        .catch(() => undefined)
        .then(() => {
          again = undefined;
          return run();
        });
      return again;
    }
    running = fn().finally(() => (running = undefined));
    return running;
  };
  return run;
}
