import { runAttempts } from './attempt.js';
import { startForEach } from './for-each.js';
import type { Run } from './run-chain.js';

// Where a started step goes: the elements of a for_each, or one unit of work whose outcome the
// run receives directly (the run is the sink, keyed by step index).

export function startStep(run: Run, i: number): void {
  const step = run.steps[i]!;
  if (step.forEach !== undefined) return startForEach(run, i, step);
  void runAttempts(run, i, run.ctx, run, i, undefined);
}
