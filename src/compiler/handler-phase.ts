import { COMPENSATE_SUFFIX } from './compile-handlers.js';
import type { ChainPlan, PlanStep } from './plan.js';
import type { HandlerPhase } from '../run-model/result.js';

// Which part of a run a step of failure handling belongs to, for those who show or count steps
// from their names (a stored run's records) or from their events (`phase` and `index`).

/** The phase of a top-level step key of a run of `plan`: an on_failure or finally step, a compensation, or none (a step of the chain). */
export function phaseOf(plan: ChainPlan | undefined, key: string): HandlerPhase | undefined {
  if (key.endsWith(COMPENSATE_SUFFIX)) return 'compensate';
  const h = plan?.handlers;
  if (h === undefined) return undefined;
  if (h.onFailure?.steps.some((s) => s.name === key)) return 'on_failure';
  if (h.finally?.steps.some((s) => s.name === key)) return 'finally';
  return undefined;
}

/** The plan step an event names: `index` in the chain's steps, or in its handler list (`phase`); a compensation by its name. */
export function eventStep(plan: ChainPlan | undefined, phase: HandlerPhase | undefined, index: number, step: string): PlanStep | undefined {
  if (plan === undefined) return undefined;
  if (phase === undefined) return plan.steps[index];
  const h = plan.handlers;
  if (phase === 'on_failure') return h?.onFailure?.steps[index];
  if (phase === 'finally') return h?.finally?.steps[index];
  return h?.compensations.find((c) => c?.steps[0]?.name === step)?.steps[0];
}
