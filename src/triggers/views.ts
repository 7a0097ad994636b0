import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import type { RunStatus, RunStore } from '../store/types.js';
import { nextTicks, tickOfRun, triggerPrefix } from './ticks.js';

// What `toolchain triggers` (and `engine.triggers.list()`) shows of each trigger of the loaded
// chains: its settings, its next fire times on the given clock, and its newest run in the store.

export interface TriggerView {
  readonly chain: string;
  readonly id: string;
  readonly kind: 'schedule' | 'every';
  /** The cron expression, or the interval in seconds. */
  readonly schedule?: string;
  readonly every_seconds?: number;
  readonly timezone: string;
  readonly enabled: boolean;
  readonly catchup: TriggerPlan['catchup'];
  readonly overlap: TriggerPlan['overlap'];
  /** The next fire times (ISO 8601), none when disabled. */
  readonly next: readonly string[];
  /** Its newest run in the store, if any. */
  readonly last?: { readonly run_id: string; readonly tick: string; readonly status: RunStatus; readonly error_code?: string };
}

/** Runs of a chain read to find a trigger's newest run. */
const SCAN = 1000;

export async function triggerViews(plans: readonly ChainPlan[], store: RunStore, now: number, count = 3): Promise<TriggerView[]> {
  const views: TriggerView[] = [];
  for (const plan of [...plans].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!plan.triggers?.length) continue;
    const runs = await store.listRuns({ chain: plan.name, limit: SCAN });
    for (const t of plan.triggers) {
      const prefix = triggerPrefix(plan.name, t);
      let last: TriggerView['last'];
      let lastTick = -Infinity;
      for (const run of runs) {
        const tick = tickOfRun(prefix, run.id);
        if (tick === undefined || tick <= lastTick) continue;
        lastTick = tick;
        last = { run_id: run.id, tick: new Date(tick).toISOString(), status: run.status, ...(run.error ? { error_code: run.error.code } : {}) };
      }
      views.push({
        chain: plan.name,
        id: t.id,
        kind: t.kind,
        ...(t.cron !== undefined ? { schedule: t.cron } : {}),
        ...(t.everyMs !== undefined ? { every_seconds: t.everyMs / 1000 } : {}),
        timezone: t.timezone,
        enabled: t.enabled,
        catchup: t.catchup,
        overlap: t.overlap,
        next: t.enabled ? nextTicks(t, now, count).map((tick) => new Date(tick).toISOString()) : [],
        ...(last ? { last } : {}),
      });
    }
  }
  return views;
}
