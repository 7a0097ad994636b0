import type { ChainPlan, TriggerKind, TriggerPlan } from '../compiler/index.js';
import type { RunStatus, RunStore } from '../store/types.js';
import { triggerKey } from './controls.js';
import { isTicking, nextTicks, tickOfRun, triggerPrefix } from './ticks.js';

// What `toolchain triggers` (and `engine.triggers.list()`, `GET /api/triggers`) shows of each
// trigger of the loaded chains: its settings, its next fire times on the given clock (ticks only:
// events and deliveries come when they come), its newest run in the store, and whether it is
// paused (the store's record, read once for all of them). Never a webhook's secret: only the name
// of the variable that holds it.

export interface TriggerView {
  readonly chain: string;
  readonly id: string;
  readonly kind: TriggerKind;
  /** The cron expression, or the interval in seconds. */
  readonly schedule?: string;
  readonly every_seconds?: number;
  /** The zone of a schedule (UTC for an interval); absent for events and webhooks. */
  readonly timezone?: string;
  /** The event's name, and the payload it must match (event triggers). */
  readonly event?: string;
  readonly match?: Readonly<Record<string, unknown>>;
  /** The route (`/hooks/PATH`), how deliveries are signed and the variable holding the secret (webhooks). */
  readonly path?: string;
  readonly signature?: string;
  readonly secret_env?: string;
  readonly enabled: boolean;
  readonly catchup: TriggerPlan['catchup'];
  readonly overlap: TriggerPlan['overlap'];
  /** The next fire times (ISO 8601); none when disabled or paused, and none for events and webhooks. */
  readonly next: readonly string[];
  /** Set while it is paused: by whom, since when (ISO 8601), why. */
  readonly paused?: { readonly by: string; readonly at: string; readonly reason?: string };
  /**
   * Its newest run in the store, if any: for ticks the tick it fired; for events and webhooks
   * when it started (ISO 8601).
   */
  readonly last?: { readonly run_id: string; readonly tick?: string; readonly started_at?: string; readonly status: RunStatus; readonly error_code?: string };
}

/** A trigger as `list()` shows it after a pause or a resume, and whether that call changed it. */
export type TriggerUpdate = TriggerView & { readonly changed: boolean };

/** Runs of a chain read to find a trigger's newest run. */
const SCAN = 1000;

export async function triggerViews(plans: readonly ChainPlan[], store: RunStore, now: number, count = 3): Promise<TriggerView[]> {
  const views: TriggerView[] = [];
  const paused = new Map((await store.triggers.list()).flatMap((c) => (c.paused !== null ? [[c.key, c.paused] as const] : [])));
  for (const plan of [...plans].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!plan.triggers?.length) continue;
    const runs = await store.listRuns({ chain: plan.name, limit: SCAN });
    for (const t of plan.triggers) {
      const prefix = triggerPrefix(plan.name, t);
      const ticks = isTicking(t);
      let last: TriggerView['last'];
      if (ticks) {
        let lastTick = -Infinity;
        for (const run of runs) {
          const tick = tickOfRun(prefix, run.id);
          if (tick === undefined || tick <= lastTick) continue;
          lastTick = tick;
          last = { run_id: run.id, tick: new Date(tick).toISOString(), status: run.status, ...(run.error ? { error_code: run.error.code } : {}) };
        }
      } else {
        // Newest first: the first of the trigger's is its newest.
        const run = runs.find((r) => r.id.startsWith(prefix));
        if (run) last = { run_id: run.id, started_at: new Date(run.created_at).toISOString(), status: run.status, ...(run.error ? { error_code: run.error.code } : {}) };
      }
      const pause = paused.get(triggerKey(plan.name, t));
      views.push({
        chain: plan.name,
        id: t.id,
        kind: t.kind,
        ...(t.cron !== undefined ? { schedule: t.cron } : {}),
        ...(t.everyMs !== undefined ? { every_seconds: t.everyMs / 1000 } : {}),
        ...(ticks ? { timezone: t.timezone } : {}),
        ...(t.event !== undefined ? { event: t.event } : {}),
        ...(t.match !== undefined ? { match: t.match } : {}),
        ...(t.webhook !== undefined ? { path: `/hooks/${t.webhook.path}`, signature: t.webhook.signature, secret_env: t.webhook.secretEnv } : {}),
        enabled: t.enabled,
        catchup: t.catchup,
        overlap: t.overlap,
        next: t.enabled && ticks && pause === undefined ? nextTicks(t, now, count).map((tick) => new Date(tick).toISOString()) : [],
        ...(last ? { last } : {}),
        ...(pause !== undefined ? { paused: { by: pause.by, at: new Date(pause.at).toISOString(), ...(pause.reason !== undefined ? { reason: pause.reason } : {}) } } : {}),
      });
    }
  }
  return views;
}
