import type { ChainPlan, ChainSet } from '../compiler/index.js';

/**
 * An edit that breaks a chain file keeps the chain's last good version runnable (its
 * diagnostics are reported all the same); deleting the file removes the chain.
 */
export function keepLastGood(previous: ChainSet, next: ChainSet): ChainSet {
  let plans: Map<string, ChainPlan> | undefined;
  for (const [name, plan] of previous.plans) {
    if (next.plans.has(name)) continue;
    const stillThere = next.files.some((f) => f.file === plan.file && (f.name === undefined || f.name === name));
    if (!stillThere) continue;
    plans ??= new Map(next.plans);
    plans.set(name, plan);
  }
  return plans ? { ...next, plans } : next;
}
