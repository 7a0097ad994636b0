import type { Registry } from 'prom-client';
import { lazyPackage } from '../common/lazy-package.js';
import type { StoredWait, WaitFilter } from '../store/wait-types.js';

const promClient = lazyPackage<typeof import('prom-client')>('prom-client');

// Gauges of what waits, read from the run store when metrics are scraped (a waiting run lives
// in the store, not in any process, so no process could count them from its own events):
// `toolchain_runs_waiting{chain,reason}` (reason: sleep, event, approval — a run waiting on
// several things counts once per reason) and `toolchain_approvals_pending`. A scrape reads the
// open waits, at most SCRAPE_LIMIT of them.

export interface WaitSource {
  listWaits(filter?: WaitFilter): Promise<readonly StoredWait[]>;
}

const SCRAPE_LIMIT = 100_000;

export function registerWaitMetrics(registry: Registry, source: WaitSource): void {
  // One registry may serve several engines: the first one's store is the one counted.
  if (registry.getSingleMetric('toolchain_runs_waiting') !== undefined) return;
  const { Gauge } = promClient();
  const waiting = new Gauge({
    name: 'toolchain_runs_waiting',
    help: 'Runs parked on a wait, by chain and what they wait for (sleep, event, approval).',
    labelNames: ['chain', 'reason'] as const,
    registers: [registry],
    async collect() {
      const runs = new Map<string, Set<string>>();
      for (const w of await open()) {
        const key = `${w.chain}\u0000${w.kind}`;
        let set = runs.get(key);
        if (set === undefined) runs.set(key, (set = new Set()));
        set.add(w.run_id);
      }
      waiting.reset();
      for (const [key, set] of runs) {
        const [chain, reason] = key.split('\u0000') as [string, string];
        waiting.labels(chain, reason).set(set.size);
      }
    },
  });
  const pending = new Gauge({
    name: 'toolchain_approvals_pending',
    help: 'Approval requests waiting for a decision.',
    registers: [registry],
    async collect() {
      pending.set((await source.listWaits({ kind: 'approval', open: true, limit: SCRAPE_LIMIT }).catch(() => [])).length);
    },
  });
  // Each gauge reads the store itself: a scrape is two reads of the open waits.
  function open(): Promise<readonly StoredWait[]> {
    return source.listWaits({ open: true, limit: SCRAPE_LIMIT }).catch(() => []);
  }
}
