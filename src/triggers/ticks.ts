import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import { parseCron, type CronSchedule } from '../expr/cron.js';

// A trigger's ticks and the run ids they give. Every process computes the same ticks from the
// same plan — `every` at the multiples of its interval since the Unix epoch, `schedule` where
// croner says — and the same run id from a tick, so that the run store's create-if-absent makes
// one run of a tick however many processes fire it.
//
// Run id: `CHAIN#TRIGGER@TICK`, the tick in ISO 8601's basic format (`20261201T050000Z`). The
// extended format's ':' is refused in BullMQ job ids, and a queued run's id is its job's id; the
// basic format is the same instant, still ISO 8601, and the same id whether the run is queued or
// not. Ticks are whole seconds (cron's finest field; `every` is whole seconds), so no fraction.

const schedules = new WeakMap<TriggerPlan, CronSchedule>();

function schedule(t: TriggerPlan): CronSchedule {
  let s = schedules.get(t);
  if (s === undefined) {
    const parsed = parseCron(t.cron!, t.timezone);
    if ('problem' in parsed) throw new Error(parsed.problem); // compiled plans hold valid expressions only
    schedules.set(t, (s = parsed.schedule));
  }
  return s;
}

/** What a trigger's ticks depend on (its kind, cron, zone and interval): a change starts it from now. */
export function scheduleFingerprint(t: TriggerPlan): string {
  return `${t.kind} ${t.cron ?? ''} ${t.timezone} ${t.everyMs ?? ''}`;
}

/** The first `count` ticks strictly after `after`, ascending. */
export function nextTicks(t: TriggerPlan, after: number, count: number): number[] {
  if (t.kind === 'schedule') return schedule(t).next(after, count);
  const every = t.everyMs!;
  const first = (Math.floor(after / every) + 1) * every;
  return Array.from({ length: count }, (_, i) => first + i * every);
}

/** The newest `count` ticks at or before `upto` and strictly after `after`, ascending. */
export function ticksBetween(t: TriggerPlan, after: number, upto: number, count: number): number[] {
  if (upto <= after || count <= 0) return [];
  let newest: number[];
  if (t.kind === 'schedule') newest = schedule(t).previous(upto, count);
  else {
    const every = t.everyMs!;
    const last = Math.floor(upto / every) * every;
    newest = Array.from({ length: count }, (_, i) => last - i * every);
  }
  return newest.filter((tick) => tick > after).reverse();
}

/** `20261201T050000Z` */
export function tickName(tick: number): string {
  return new Date(tick).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

export function tickFromName(name: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(name);
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `CHAIN#ID@` — every run of the trigger has an id that starts so. */
export function triggerPrefix(chain: string, t: Pick<TriggerPlan, 'id'>): string {
  return `${chain}#${t.id}@`;
}

export function triggerRunId(chain: string, t: Pick<TriggerPlan, 'id'>, tick: number): string {
  return triggerPrefix(chain, t) + tickName(tick);
}

/** The tick a run id of this trigger names (undefined: not one of its runs). */
export function tickOfRun(prefix: string, runId: string): number | undefined {
  return runId.startsWith(prefix) ? tickFromName(runId.slice(prefix.length)) : undefined;
}

/** A trigger that has ticks (a schedule, an interval), not one that waits for events or deliveries. */
export function isTicking(t: Pick<TriggerPlan, 'kind'>): boolean {
  return t.kind === 'schedule' || t.kind === 'every';
}

/** Every trigger of the plans that has ticks, with its chain. */
export function tickingTriggers(plans: readonly ChainPlan[]): { plan: ChainPlan; trigger: TriggerPlan }[] {
  return plans.flatMap((plan) => (plan.triggers ?? []).filter(isTicking).map((trigger) => ({ plan, trigger })));
}
