import { performCall } from '../call/index.js';
import { startForEach } from './for-each.js';
import { startRepeat } from './repeat-step.js';
import type { Run } from './run.js';
import { NO_ARGS, unresolvable } from './run-context.js';

// What a started step does: resolve its arguments from the run context and make its call (the
// run receives the outcome as the step's CallWatcher), fan out over a for_each, or run rounds of
// a repeat. An input_map with a path in it resolves to a new object per call (a constant one is
// one frozen object): performCall may then validate it in place.

export function startStep(run: Run, i: number): void {
  const step = run.plan.steps[i]!;
  if (step.forEach !== undefined) return startForEach(run, i, step);
  if (step.repeat !== undefined) return startRepeat(run, i, step);
  let args: Record<string, unknown>;
  try {
    args = step.input.get(run.context) as Record<string, unknown>;
  } catch (error) {
    return performCall({ owner: run, site: run.site(i), watcher: run, key: i, args: NO_ARGS, scope: run.context, item: undefined, unresolved: unresolvable(error) });
  }
  performCall({ owner: run, site: run.site(i), watcher: run, key: i, args, scope: run.context, item: undefined, fresh: !step.input.constant });
}
