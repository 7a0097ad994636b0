import type { Clock } from '../common/clock.js';
import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import type { RunStore } from '../store/types.js';
import { EventTriggers } from './event-triggers.js';
import { tickName, tickOfRun, ticksBetween, triggerPrefix, triggerRunId } from './ticks.js';

// Firing triggers: the periodic loop of serve, worker, watch and `createEngine({ triggers: true })`.
// Each look reads the engine's current plans (so a reload reschedules, and a removed chain's
// triggers are gone), computes each enabled trigger's ticks that came due on the engine's clock,
// and starts one run per tick under the id the tick names (ticks.ts). Any number of processes
// may fire the same tick: the store's create-if-absent keeps one run, and the others see it.
//
// What a process knows of a trigger it meets for the first time (at start, or after a reload
// that brought it) comes from the store: the newest run whose id has the trigger's prefix is the
// last tick fired. No such run: the trigger is new and starts from now. Otherwise the ticks since
// that one were missed while no process ran, and `catchup` says what happens to them:
// `none` drops them, `latest` fires the newest, `all` fires them all, at most the newest
// MAX_CATCHUP. Editing a trigger's schedule (its cron, zone or interval), or enabling it again
// after this process saw it disabled, starts it from now.
//
// `overlap` looks at the store too, so it holds across processes: `skip` drops a tick while a run
// of the trigger (of an earlier tick) is running or waiting; `queue` keeps it until that run has
// ended (at most MAX_QUEUED ticks, the oldest dropped past that); `allow` fires regardless. The
// missed ticks `catchup: all` brings are never skipped for overlap: each waits for the one before
// (unless `allow`), since having each of them is what `all` asks for. A run whose process died
// counts as going until recovery has resumed and ended it.
//
// Event triggers are looked at in the same loop, after the ticks (event-triggers.ts); webhook
// triggers are not fired here but by the server that receives their deliveries (webhooks.ts).

/** Most missed ticks `catchup: all` fires; older ones are dropped. */
export const MAX_CATCHUP = 100;
/** Most ticks `overlap: queue` holds for one trigger. */
export const MAX_QUEUED = 100;
/** Runs of a chain read to find a trigger's last tick and its runs still going. */
const SCAN = 1000;

/**
 * What a process did with a tick, an event or a webhook delivery: `tick` (`20261201T050000Z`)
 * names a schedule's or an interval's tick, `event_id` the event (or the delivery) that came.
 */
export type TriggerEvent =
  | { readonly type: 'trigger:fired'; readonly chain: string; readonly trigger: string; readonly tick?: string; readonly event_id?: string; readonly run_id: string; readonly timestamp: number }
  | { readonly type: 'trigger:skipped'; readonly chain: string; readonly trigger: string; readonly tick?: string; readonly event_id?: string; readonly run_id: string; readonly timestamp: number; readonly reason: 'overlap' | 'queue_full' | 'refused'; readonly message?: string };

/**
 * How a start went: `fired` (the run is recorded, by this process), `exists` (another process, or
 * an earlier look, made it), or refused before any run was recorded (an input the chain refuses: its message).
 */
export type FireOutcome = 'fired' | 'exists' | { readonly refused: string };

export interface SchedulerSettings {
  readonly store: RunStore;
  readonly clock: Clock;
  /** The loaded plans, read at each look. */
  readonly plans: () => readonly ChainPlan[];
  /** Starts the run; resolves once it is recorded (or refused). */
  readonly start: (plan: ChainPlan, input: unknown, runId: string) => Promise<FireOutcome>;
  /** How often to look (default 250 ms): a tick fires within this of its time. */
  readonly intervalMs?: number;
  readonly onEvent?: (event: TriggerEvent) => void;
  readonly onError?: (error: unknown) => void;
}

interface TriggerState {
  /** What the ticks depend on: a change starts the trigger from now. */
  readonly fingerprint: string;
  /** Ticks up to here have been taken in. */
  last: number;
  /** Ticks taken in and not yet fired or dropped, ascending. */
  pending: number[];
  /** Of `pending`, the missed ticks `catchup: all` brought: each waits for the run before it rather than being skipped. */
  readonly caughtUp: Set<number>;
}

export class TriggerScheduler {
  private readonly states = new Map<string, TriggerState>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private looking: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private closed = false;
  private readonly events: EventTriggers;

  constructor(private readonly s: SchedulerSettings) {
    this.events = new EventTriggers({ store: s.store, clock: s.clock, start: s.start, ...(s.onEvent ? { onEvent: s.onEvent } : {}) });
  }

  /** The first look now, then one every interval. */
  start(): Promise<void> {
    if (this.timer === undefined && !this.closed) {
      this.timer = setInterval(() => void this.look(), this.s.intervalMs ?? 250);
      this.timer.unref(); // the process stays up for its own reasons (a server, a worker)
    }
    return this.look();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at a time; a look asked for during one runs right after it (once, however often asked). */
  look(): Promise<void> {
    if (this.looking) {
      this.next ??= this.looking.then(() => {
        this.next = undefined;
        return this.look();
      });
      return this.next;
    }
    this.looking = this.lookOnce()
      .catch((error: unknown) => this.s.onError?.(error))
      .finally(() => (this.looking = undefined));
    return this.looking;
  }

  private async lookOnce(): Promise<void> {
    const seen = new Set<string>();
    const plans = this.s.plans();
    for (const plan of plans) {
      for (const trigger of plan.triggers ?? []) {
        if (this.closed) return;
        if (trigger.kind !== 'schedule' && trigger.kind !== 'every') continue;
        const key = triggerPrefix(plan.name, trigger);
        seen.add(key);
        if (!trigger.enabled) {
          // Its ticks meanwhile are not missed ones: enabled again, it starts from then (a changed fingerprint).
          this.states.set(key, { fingerprint: 'disabled', last: this.s.clock.now(), pending: [], caughtUp: new Set<number>() });
          continue;
        }
        try {
          await this.lookAt(plan, trigger, key);
        } catch (error) {
          this.s.onError?.(error);
        }
      }
    }
    for (const key of this.states.keys()) if (!seen.has(key)) this.states.delete(key);
    if (this.closed) return;
    try {
      await this.events.look(plans, () => this.closed);
    } catch (error) {
      this.s.onError?.(error);
    }
  }

  private async lookAt(plan: ChainPlan, t: TriggerPlan, key: string): Promise<void> {
    const now = this.s.clock.now();
    const fingerprint = `${t.kind} ${t.cron ?? ''} ${t.timezone} ${t.everyMs ?? ''}`;
    let state = this.states.get(key);
    if (state === undefined || state.fingerprint !== fingerprint) {
      state = state === undefined ? await this.firstLook(plan, t, key, fingerprint, now) : { fingerprint, last: now, pending: [], caughtUp: new Set<number>() };
      this.states.set(key, state);
    } else {
      const due = ticksBetween(t, state.last, now, MAX_CATCHUP);
      if (due.length > 0) state.pending.push(...due);
      state.last = Math.max(state.last, now);
    }
    if (state.pending.length > MAX_QUEUED) {
      for (const tick of state.pending.splice(0, state.pending.length - MAX_QUEUED)) this.skipped(plan, t, tick, 'queue_full');
    }
    await this.drain(plan, t, key, state);
  }

  /** What the store says of a trigger this process has not looked at yet: its last tick, and the ticks missed since. */
  private async firstLook(plan: ChainPlan, t: TriggerPlan, prefix: string, fingerprint: string, now: number): Promise<TriggerState> {
    const runs = await this.s.store.listRuns({ chain: plan.name, limit: SCAN });
    let lastFired: number | undefined;
    for (const run of runs) {
      const tick = tickOfRun(prefix, run.id);
      if (tick !== undefined && (lastFired === undefined || tick > lastFired)) lastFired = tick;
    }
    const state: TriggerState = { fingerprint, last: now, pending: [], caughtUp: new Set<number>() };
    if (lastFired === undefined || t.catchup === 'none') return state; // new (or no catch-up): from now on
    const missed = ticksBetween(t, lastFired, now, t.catchup === 'all' ? MAX_CATCHUP : 1);
    state.pending.push(...missed);
    if (t.catchup === 'all') for (const tick of missed) state.caughtUp.add(tick);
    return state;
  }

  private async drain(plan: ChainPlan, t: TriggerPlan, prefix: string, state: TriggerState): Promise<void> {
    while (state.pending.length > 0 && !this.closed) {
      const tick = state.pending[0]!;
      if (t.overlap !== 'allow' && (await this.going(plan, prefix, tick))) {
        if (t.overlap === 'queue' || state.caughtUp.has(tick)) return; // kept: fired once the run going has ended
        state.pending.shift();
        this.skipped(plan, t, tick, 'overlap');
        continue;
      }
      state.pending.shift();
      state.caughtUp.delete(tick);
      await this.fire(plan, t, tick);
    }
  }

  /** A run of the trigger for an earlier tick is running or waiting (in any process). */
  private async going(plan: ChainPlan, prefix: string, tick: number): Promise<boolean> {
    for (const status of ['running', 'waiting'] as const) {
      const runs = await this.s.store.listRuns({ chain: plan.name, status, limit: SCAN });
      if (runs.some((run) => (tickOfRun(prefix, run.id) ?? Infinity) < tick)) return true;
    }
    return false;
  }

  private async fire(plan: ChainPlan, t: TriggerPlan, tick: number): Promise<void> {
    const runId = triggerRunId(plan.name, t, tick);
    if ((await this.s.store.getRun(runId)) !== undefined) return; // fired elsewhere already
    const at = new Date(tick).toISOString();
    const input = t.input?.get({ tick: { at, trigger: t.id } }) ?? {};
    const outcome = await this.s.start(plan, input, runId);
    if (outcome === 'fired') this.s.onEvent?.({ type: 'trigger:fired', chain: plan.name, trigger: t.id, tick: tickName(tick), run_id: runId, timestamp: this.s.clock.now() });
    else if (typeof outcome === 'object') this.skipped(plan, t, tick, 'refused', outcome.refused);
  }

  private skipped(plan: ChainPlan, t: TriggerPlan, tick: number, reason: 'overlap' | 'queue_full' | 'refused', message?: string): void {
    this.s.onEvent?.({ type: 'trigger:skipped', chain: plan.name, trigger: t.id, tick: tickName(tick), run_id: triggerRunId(plan.name, t, tick), timestamp: this.s.clock.now(), reason, ...(message !== undefined ? { message } : {}) });
  }
}
