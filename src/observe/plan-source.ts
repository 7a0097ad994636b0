import type { ChainPlan, PlanStep } from '../compiler/plan.js';

// What the observers need of an engine: the plan of a chain by name, to turn an event's
// `chain` + `index` into the step's tool. `Engine` has this method; tests may pass a stub.
export interface PlanSource {
  chain(name: string): ChainPlan | undefined;
}

/** The `tool` label of a step: its tool, `chain:NAME` for a sub-chain, `agent:MODEL` for an agent, `wait:sleep` (`event`, `approval`) for a wait. */
export function toolLabel(step: PlanStep | undefined): string {
  if (step === undefined) return 'unknown';
  const target = step.target;
  if (target.kind === 'tool') return target.tool;
  if (target.kind === 'chain') return `chain:${target.chain}`;
  if (target.kind === 'wait') return `wait:${target.wait.type}`;
  return `agent:${target.agent.model}`;
}
