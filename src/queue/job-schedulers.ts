import type { JobSchedulerJson, Queue, RepeatOptions, RepeatStrategy } from 'bullmq';
import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import { parseCron, type CronSchedule } from '../expr/cron.js';

// The loaded chains' triggers as BullMQ job schedulers, one per enabled trigger, with the id
// `CHAIN#ID`, on the queue's own triggers queue (`QUEUE~triggers`: a name no queue URL can give,
// so it is never a queue of runs). A scheduler's jobs only wake the trigger's logic (tick-jobs.ts):
// which ticks are due is always worked out by the ticks of the trigger (triggers/ticks.ts), so a
// job a little early, late or twice changes nothing about which runs start.
//
// Still, its jobs come at the ticks' times, so that a tick fires when it is due:
// - `schedule` is a scheduler with `pattern` and `tz`, whose next times come from croner through
//   a repeat strategy of our own, given to both the queue that upserts and the worker that takes
//   the jobs (BullMQ asks for it in both). BullMQ's own cron-parser differs from croner where it
//   matters: on the spring day a fixed time is skipped (02:30 in Paris fires at 03:00 with croner,
//   03:30 with cron-parser), and it refuses `W`. One strategy serves a whole queue, which is
//   one more reason this queue is ours alone.
// - `every` is a scheduler with `every` and a start at the next multiple of the interval since
//   the Unix epoch: BullMQ then keeps to those multiples (without a start it would count from the
//   moment of the upsert).
//
// Making the schedulers match the chains is idempotent: a scheduler that already says the same
// is left alone (upserting it again would move a job that is overdue, whose lateness is what
// tells the missed ticks), one that differs is replaced, and one no chain declares is removed.
// Processes that upsert the same scheduler at once make one schedule: BullMQ keeps one scheduler
// per id and replaces its next job.

export const TICK_JOB = 'tick';
/** A look asked for while ticks are kept for later: a plain job, one per trigger and second. */
export const LOOK_JOB = 'look';

/** The data of a tick (and look) job: which trigger to look at. */
export interface TickJob {
  readonly v: 1;
  readonly chain: string;
  readonly trigger: string;
}

/** Done jobs are not kept: the run store is the history, and a kept one would hold its id. */
export const TICK_JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3_600, count: 100 },
  // A look throws only when the store or Redis is away.
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
} as const;

export function triggersQueueName(queueName: string): string {
  return `${queueName}~triggers`;
}

export function schedulerId(chain: string, t: Pick<TriggerPlan, 'id'>): string {
  return `${chain}#${t.id}`;
}

export function tickJobData(chain: string, t: Pick<TriggerPlan, 'id'>): TickJob {
  return { v: 1, chain, trigger: t.id };
}

export function decodeTickJob(data: unknown): TickJob | undefined {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Partial<Record<keyof TickJob, unknown>>;
  return d.v === 1 && typeof d.chain === 'string' && typeof d.trigger === 'string' ? { v: 1, chain: d.chain, trigger: d.trigger } : undefined;
}

/** croner's next fire time after `millis`, for the queue's and the worker's `settings.repeatStrategy`. */
export function cronerRepeatStrategy(): RepeatStrategy {
  const parsed = new Map<string, CronSchedule | undefined>();
  return (millis: number, opts: RepeatOptions): number | undefined => {
    if (opts.pattern === undefined) return undefined;
    const key = `${opts.tz ?? 'UTC'} ${opts.pattern}`;
    if (!parsed.has(key)) {
      const result = parseCron(opts.pattern, opts.tz ?? 'UTC');
      parsed.set(key, 'schedule' in result ? result.schedule : undefined); // compiled plans hold valid expressions only
      if (parsed.size > 1_000) parsed.delete(parsed.keys().next().value!);
    }
    return parsed.get(key)?.next(millis, 1)[0];
  };
}

function repeatOf(t: TriggerPlan, now: number): Omit<RepeatOptions, 'key'> {
  if (t.kind === 'schedule') return { pattern: t.cron!, tz: t.timezone };
  const every = t.everyMs!;
  return { every, startDate: (Math.floor(now / every) + 1) * every };
}

function sameSchedule(j: JobSchedulerJson, plan: ChainPlan, t: TriggerPlan): boolean {
  const data = decodeTickJob(j.template?.data);
  if (j.name !== TICK_JOB || data?.chain !== plan.name || data.trigger !== t.id) return false;
  if (t.kind === 'schedule') return j.pattern === t.cron && (j.tz ?? 'UTC') === t.timezone && j.every === undefined;
  return j.every === t.everyMs && j.pattern === undefined;
}

export interface DeclaredTrigger {
  readonly plan: ChainPlan;
  readonly trigger: TriggerPlan;
}

/** The job schedulers on the triggers queue, by id. */
export async function listJobSchedulers(queue: Queue): Promise<Map<string, JobSchedulerJson>> {
  return new Map((await queue.getJobSchedulers(0, -1, true)).map((j) => [j.key, j]));
}

/**
 * Makes the queue's schedulers those of `enabled`: added or replaced where they differ, removed
 * where no trigger of `enabled` has one. One that fails leaves the others done: the first failure
 * is thrown once all were tried. Returns the ids removed.
 */
export async function syncJobSchedulers(queue: Queue, enabled: readonly DeclaredTrigger[]): Promise<string[]> {
  const existing = await listJobSchedulers(queue);
  const wanted = new Map(enabled.map((d) => [schedulerId(d.plan.name, d.trigger), d]));
  const removed: string[] = [];
  const failures: unknown[] = [];
  for (const id of existing.keys()) {
    if (wanted.has(id)) continue;
    await queue.removeJobScheduler(id).then(() => removed.push(id), (error: unknown) => failures.push(error));
  }
  for (const [id, { plan, trigger }] of wanted) {
    const j = existing.get(id);
    if (j !== undefined && sameSchedule(j, plan, trigger)) continue;
    try {
      // Replaced, not updated in place: a scheduler that changed kind keeps none of the old one's fields.
      if (j !== undefined) await queue.removeJobScheduler(id);
      // BullMQ times its jobs on the real clock, whatever clock the engine reads.
      await queue.upsertJobScheduler(id, repeatOf(trigger, Date.now()), { name: TICK_JOB, data: tickJobData(plan.name, trigger), opts: TICK_JOB_OPTIONS });
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
  return removed;
}
