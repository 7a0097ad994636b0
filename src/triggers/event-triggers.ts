import type { Clock } from '../common/clock.js';
import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import { matches } from '../runs/deliver-event.js';
import type { RecordedEvent } from '../store/wait-types.js';
import type { RunStore } from '../store/types.js';
import { eventRunId } from './event-runs.js';
import type { FireOutcome, TriggerEvent } from './scheduler.js';
import { triggerPrefix } from './ticks.js';

// Event triggers (`- event: order.created`): each event of the name whose payload meets `match`
// starts one run, under the id the event gives the trigger (event-runs.ts), so that however many
// processes see the event, the store keeps one run of it.
//
// A process learns of events by following the store's event log (every process records there:
// `engine.emit`, `toolchain emit`, POST /api/events, a verified webhook): at each look it reads
// the events recorded after the last position it read. It starts at the end of the log; what was
// recorded before comes from catch-up, per trigger, the first time the process meets it:
//
// - A trigger with no run in the store is new: it starts from now, as a tick trigger does.
// - Otherwise, of the newest MAX_CATCHUP events of its name that meet `match`, those after the
//   newest one that has its run (or, when none of them has, those recorded since its newest run
//   started) were missed while no process ran: `all` (the default for events) fires each,
//   `latest` the newest, `none` none.
//
// `overlap` holds across processes as for ticks (the store says which runs are going): `allow`
// (the default for events) fires every event at once; `skip` drops an event that comes while a
// run of the trigger is running or waiting; `queue` keeps it (at most MAX_QUEUED, the oldest
// dropped past that) until that run has ended. Editing a trigger's event or match, or enabling
// it again after this process saw it disabled, starts it from now.

/** Most missed events one trigger's catch-up fires, of the newest of its name. */
export const MAX_EVENT_CATCHUP = 100;
/** Most events `overlap: queue` holds for one trigger. */
export const MAX_EVENTS_QUEUED = 100;
/** Events read from the log at once. */
const BATCH = 500;
/** Runs of a chain read to find a trigger's runs (its newest, those going). */
const SCAN = 1000;

export interface EventTriggerSettings {
  readonly store: RunStore;
  readonly clock: Clock;
  readonly start: (plan: ChainPlan, input: unknown, runId: string) => Promise<FireOutcome>;
  readonly onEvent?: (event: TriggerEvent) => void;
}

interface State {
  /** What the trigger's events depend on: a change starts it from now. */
  readonly fingerprint: string;
  /** Events taken in and not yet fired or dropped, in recording order. */
  readonly pending: RecordedEvent[];
}

interface Known {
  readonly plan: ChainPlan;
  readonly trigger: TriggerPlan;
  readonly key: string;
}

/** The event triggers of one process. */
export class EventTriggers {
  /** The log read up to here (undefined: not yet looked). */
  private cursor: number | undefined;
  private readonly states = new Map<string, State>();

  constructor(private readonly s: EventTriggerSettings) {}

  /**
   * One look: each trigger met for the first time caught up, then the events recorded since the
   * last look fired. A paused trigger is left out as a disabled one is: the events meanwhile are
   * not its, and resumed it starts from then.
   */
  async look(plans: readonly ChainPlan[], closed: () => boolean, paused: (plan: ChainPlan, t: TriggerPlan) => boolean): Promise<void> {
    const all: Known[] = plans.flatMap((plan) => (plan.triggers ?? []).filter((t) => t.kind === 'event').map((trigger) => ({ plan, trigger, key: triggerPrefix(plan.name, trigger) })));
    if (all.length === 0) {
      // Nothing follows the log meanwhile: a trigger that comes later starts from then (with catch-up).
      this.states.clear();
      this.cursor = undefined;
      return;
    }
    this.cursor ??= (await this.s.store.waits.listEvents({ newest: true, limit: 1 }))[0]?.seq ?? 0;
    const live: Known[] = [];
    const seen = new Set<string>();
    for (const k of all) {
      seen.add(k.key);
      if (!k.trigger.enabled || paused(k.plan, k.trigger)) {
        this.states.set(k.key, { fingerprint: 'off', pending: [] });
        continue;
      }
      const fingerprint = `${k.trigger.event} ${JSON.stringify(k.trigger.match ?? null)}`;
      const state = this.states.get(k.key);
      if (state === undefined) this.states.set(k.key, await this.firstLook(k, fingerprint, this.cursor));
      else if (state.fingerprint !== fingerprint) this.states.set(k.key, { fingerprint, pending: [] });
      live.push(k);
    }
    for (const key of this.states.keys()) if (!seen.has(key)) this.states.delete(key);

    for (;;) {
      const batch = await this.s.store.waits.listEvents({ after: this.cursor, limit: BATCH });
      for (const event of batch) {
        for (const k of live) if (k.trigger.event === event.name && matches(k.trigger.match ?? null, event.payload)) this.states.get(k.key)!.pending.push(event);
      }
      if (batch.length > 0) this.cursor = batch[batch.length - 1]!.seq;
      if (batch.length < BATCH || closed()) break;
    }

    for (const k of live) {
      const state = this.states.get(k.key)!;
      if (state.pending.length > MAX_EVENTS_QUEUED) {
        for (const event of state.pending.splice(0, state.pending.length - MAX_EVENTS_QUEUED)) this.skipped(k, event, 'queue_full');
      }
      await this.drain(k, state, closed);
    }
  }

  /** What the store says of a trigger this process has not looked at yet: the events it missed up to `upto`. */
  private async firstLook(k: Known, fingerprint: string, upto: number): Promise<State> {
    const state: State = { fingerprint, pending: [] };
    const t = k.trigger;
    if (t.catchup === 'none') return state;
    const runs = (await this.s.store.listRuns({ chain: k.plan.name, limit: SCAN })).filter((run) => run.id.startsWith(k.key));
    if (runs.length === 0) return state; // new: from now on
    const ids = new Set(runs.map((run) => run.id));
    const newestStart = Math.max(...runs.map((run) => run.created_at));
    const recent = (await this.s.store.waits.listEvents({ name: t.event!, newest: true, limit: MAX_EVENT_CATCHUP })).filter((e) => e.seq <= upto && matches(t.match ?? null, e.payload));
    let last = -1;
    for (let i = recent.length - 1; i >= 0; i--) {
      if (ids.has(eventRunId(k.plan.name, t, recent[i]!.id))) {
        last = i;
        break;
      }
    }
    let missed = last >= 0 ? recent.slice(last + 1) : recent.filter((e) => e.at >= newestStart);
    if (t.catchup === 'latest') missed = missed.slice(-1);
    state.pending.push(...missed);
    return state;
  }

  private async drain(k: Known, state: State, closed: () => boolean): Promise<void> {
    while (state.pending.length > 0 && !closed()) {
      const event = state.pending[0]!;
      const runId = eventRunId(k.plan.name, k.trigger, event.id);
      if (k.trigger.overlap !== 'allow' && (await this.going(k, runId))) {
        if (k.trigger.overlap === 'queue') return; // kept: fired once the run going has ended
        state.pending.shift();
        this.skipped(k, event, 'overlap');
        continue;
      }
      state.pending.shift();
      await this.fire(k, event, runId);
    }
  }

  /** A run of the trigger for another event is running or waiting (in any process). */
  private async going(k: Known, runId: string): Promise<boolean> {
    for (const status of ['running', 'waiting'] as const) {
      const runs = await this.s.store.listRuns({ chain: k.plan.name, status, limit: SCAN });
      if (runs.some((run) => run.id !== runId && run.id.startsWith(k.key))) return true;
    }
    return false;
  }

  private async fire(k: Known, event: RecordedEvent, runId: string): Promise<void> {
    if ((await this.s.store.getRun(runId)) !== undefined) return; // fired elsewhere already
    const input = k.trigger.input?.get({ event: { name: event.name, id: event.id, payload: event.payload } }) ?? {};
    const outcome = await this.s.start(k.plan, input, runId);
    if (outcome === 'fired') this.s.onEvent?.({ type: 'trigger:fired', chain: k.plan.name, trigger: k.trigger.id, event_id: event.id, run_id: runId, timestamp: this.s.clock.now() });
    else if (typeof outcome === 'object') this.skipped(k, event, 'refused', outcome.refused);
  }

  private skipped(k: Known, event: RecordedEvent, reason: 'overlap' | 'queue_full' | 'refused', message?: string): void {
    this.s.onEvent?.({ type: 'trigger:skipped', chain: k.plan.name, trigger: k.trigger.id, event_id: event.id, run_id: eventRunId(k.plan.name, k.trigger, event.id), timestamp: this.s.clock.now(), reason, ...(message !== undefined ? { message } : {}) });
  }
}
