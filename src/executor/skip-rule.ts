import type { PlanStep } from '../compiler/plan.js';
import type { StepState } from './step-state.js';
import type { SkipReason } from '../run-model/step-record.js';

/**
 * Whether a ready step is skipped. A step's own `when` alone decides; without one, a
 * skipped step it reads or names in `depends_on` skips it too (order alone never does). A `when`
 * that reads `$.item` decides per element instead (for-each.ts). Throws what a `when` that cannot
 * be evaluated throws.
 */
export function skipReason(step: PlanStep, context: Record<string, unknown>, states: readonly StepState[]): SkipReason | undefined {
  if (step.when !== undefined) return step.forEach?.whenPerItem === true || step.when.test(context) ? undefined : 'when';
  const skipsWith = step.skipsWith;
  for (let k = 0; k < skipsWith.length; k++) if (states[skipsWith[k]!]!.status === 'skipped') return 'dependency';
  return undefined;
}
