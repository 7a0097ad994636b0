import type { Clock } from '../common/clock.js';
import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import type { RunStore } from '../store/types.js';
import type { TriggerControl, TriggerPause } from '../store/trigger-control-types.js';
import { triggerKey } from './controls.js';
import { EventTriggers } from './event-triggers.js';
import { isTicking, scheduleFingerprint, tickName, tickOfRun, ticksBetween, triggerPrefix, triggerRunId } from './ticks.js';

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
// A paused trigger (the store's record, store.triggers, read once per look) fires nothing: its
// ticks meanwhile are neither fired, nor skipped, nor missed — on resume it starts from the time
// of the resume, as a trigger enabled again does, and the ticks it had kept (`queue`, `all`) are
// dropped when it is paused. A process meeting a trigger for the first time counts as missed only
// the ticks after its last resume. `trigger:paused` and `trigger:resumed` say when this process
// saw the change (whichever process made it).
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
  | { readonly type: 'trigger:skipped'; readonly chain: string; readonly trigger: string; readonly tick?: string; readonly event_id?: string; readonly run_id: string; readonly timestamp: number; readonly reason: 'overlap' | 'queue_full' | 'refused'; readonly message?: string }
  /** Seen paused in the store (by whichever process paused it): it fires nothing until resumed. `at`: when it was paused. */
  | { readonly type: 'trigger:paused'; readonly chain: string; readonly trigger: string; readonly by: string; readonly at: number; readonly reason?: string; readonly timestamp: number }
  /** Seen resumed: it starts from `at`, the time of the resume. */
  | { readonly type: 'trigger:resumed'; readonly chain: string; readonly trigger: string; readonly at: number; readonly timestamp: number };

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
  /**
   * What is known of each trigger, by `CHAIN#ID@` (default: this scheduler's own, in memory). A
   * queue's processes bring the state they share for the one trigger a tick job names.
   */
  readonly states?: Map<string, TriggerState>;
  /** false: look at event triggers only (a queue's job schedulers carry the ticks). */
  readonly ticks?: boolean;
}

export interface TriggerState {
  /** What the ticks depend on (PAUSED while paused): a change starts the trigger from now. */
  readonly fingerprint: string;
  /** Ticks up to here have been taken in. */
  last: number;
  /** Ticks taken in and not yet fired or dropped, ascending. */
  pending: number[];
  /** Of `pending`, the missed ticks `catchup: all` brought: each waits for the run before it rather than being skipped. */
  readonly caughtUp: Set<number>;
}

/** The fingerprint of a paused trigger's state. */
const PAUSED = 'paused';

export class TriggerScheduler {
  private readonly states: Map<string, TriggerState>;
  private timer: ReturnType<typeof setInterval> | undefined;
  private looking: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private closed = false;
  private readonly events: EventTriggers;
  /** Whether each event and webhook trigger was paused at the last look (`CHAIN#ID`). */
  private readonly pauses = new Map<string, boolean>();

  constructor(private readonly s: SchedulerSettings) {
    this.states = s.states ?? new Map<string, TriggerState>();
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
    // No store read at all while no loaded chain has an enabled trigger.
    const any = plans.some((p) => p.triggers?.some((t) => t.enabled) === true);
    const controls = new Map<string, TriggerControl>(any ? (await this.s.store.triggers.list()).map((c) => [c.key, c]) : []);
    for (const plan of plans) {
      for (const trigger of plan.triggers ?? []) {
        if (this.closed) return;
        if (!isTicking(trigger)) {
          this.notePause(plan, trigger, controls.get(triggerKey(plan.name, trigger))?.paused ?? null);
          continue;
        }
        if (this.s.ticks === false) continue;
        const key = triggerPrefix(plan.name, trigger);
        seen.add(key);
        if (!trigger.enabled) {
          // Its ticks meanwhile are not missed ones: enabled again, it starts from then (a changed fingerprint).
          this.states.set(key, { fingerprint: 'disabled', last: this.s.clock.now(), pending: [], caughtUp: new Set<number>() });
          continue;
        }
        const control = controls.get(triggerKey(plan.name, trigger));
        if (control?.paused) {
          this.pausedNow(plan, trigger, key, control.paused);
          continue;
        }
        try {
          await this.lookAt(plan, trigger, key, control?.resumed_at ?? null);
        } catch (error) {
          this.s.onError?.(error);
        }
      }
    }
    for (const key of this.states.keys()) if (!seen.has(key)) this.states.delete(key);
    if (this.closed) return;
    try {
      await this.events.look(plans, () => this.closed, (plan, t) => (controls.get(triggerKey(plan.name, t))?.paused ?? null) !== null);
    } catch (error) {
      this.s.onError?.(error);
    }
  }

  /**
   * An event or webhook trigger's pause, said as a tick trigger's is: once, when this process sees
   * it change (what it does while paused is theirs: event-triggers.ts, webhooks.ts).
   */
  private notePause(plan: ChainPlan, t: TriggerPlan, pause: TriggerPause | null): void {
    const key = triggerKey(plan.name, t);
    const before = this.pauses.get(key);
    this.pauses.set(key, pause !== null);
    if (before === undefined || before === (pause !== null)) return;
    const now = this.s.clock.now();
    if (pause !== null) this.s.onEvent?.({ type: 'trigger:paused', chain: plan.name, trigger: t.id, by: pause.by, at: pause.at, ...(pause.reason !== undefined ? { reason: pause.reason } : {}), timestamp: now });
    else this.s.onEvent?.({ type: 'trigger:resumed', chain: plan.name, trigger: t.id, at: now, timestamp: now });
  }

  /** Paused: nothing is kept, nothing fires; said once, when this process sees it paused after having seen it otherwise. */
  private pausedNow(plan: ChainPlan, t: TriggerPlan, key: string, pause: TriggerPause): void {
    const before = this.states.get(key);
    this.states.set(key, { fingerprint: PAUSED, last: this.s.clock.now(), pending: [], caughtUp: new Set<number>() });
    if (before !== undefined && before.fingerprint !== PAUSED) {
      this.s.onEvent?.({ type: 'trigger:paused', chain: plan.name, trigger: t.id, by: pause.by, at: pause.at, ...(pause.reason !== undefined ? { reason: pause.reason } : {}), timestamp: this.s.clock.now() });
    }
  }

  private async lookAt(plan: ChainPlan, t: TriggerPlan, key: string, resumedAt: number | null): Promise<void> {
    const now = this.s.clock.now();
    const fingerprint = scheduleFingerprint(t);
    let state = this.states.get(key);
    if (state !== undefined && state.fingerprint === PAUSED) {
      // Resumed: from the resume on (not before this process last saw it paused, whatever the clocks say).
      const from = Math.max(state.last, Math.min(now, resumedAt ?? now));
      this.s.onEvent?.({ type: 'trigger:resumed', chain: plan.name, trigger: t.id, at: resumedAt ?? now, timestamp: now });
      state = { fingerprint, last: from, pending: [], caughtUp: new Set<number>() };
      this.states.set(key, state);
      const due = ticksBetween(t, from, now, MAX_CATCHUP);
      if (due.length > 0) state.pending.push(...due);
      state.last = now;
    } else if (state === undefined || state.fingerprint !== fingerprint) {
      state = state === undefined ? await this.firstLook(plan, t, key, fingerprint, now, resumedAt) : { fingerprint, last: now, pending: [], caughtUp: new Set<number>() };
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
  private async firstLook(plan: ChainPlan, t: TriggerPlan, prefix: string, fingerprint: string, now: number, resumedAt: number | null): Promise<TriggerState> {
    const runs = await this.s.store.listRuns({ chain: plan.name, limit: SCAN });
    let lastFired: number | undefined;
    for (const run of runs) {
      const tick = tickOfRun(prefix, run.id);
      if (tick !== undefined && (lastFired === undefined || tick > lastFired)) lastFired = tick;
    }
    const state: TriggerState = { fingerprint, last: now, pending: [], caughtUp: new Set<number>() };
    if (lastFired === undefined || t.catchup === 'none') return state; // new (or no catch-up): from now on
    // Ticks before its last resume were paused ones, not missed ones.
    const missed = ticksBetween(t, Math.max(lastFired, resumedAt ?? -Infinity), now, t.catchup === 'all' ? MAX_CATCHUP : 1);
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
