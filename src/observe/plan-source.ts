import type { ChainPlan, PlanStep } from '../compiler/plan.js';

// What the observers need of an engine: the plan of a chain by name, to turn an event's
// `chain` + `index` into the step's tool. `Engine` has this method; tests may pass a stub.
export interface PlanSource {
  chain(name: string): ChainPlan | undefined;
}

/** The `tool` label of a step: its tool, `chain:NAME` for a sub-chain, `agent:MODEL` for an agent. */
export function toolLabel(step: PlanStep | undefined): string {
  if (step === undefined) return 'unknown';
  if (step.kind === 'tool') return step.target;
  if (step.kind === 'chain') return `chain:${step.target}`;
  return `agent:${step.agent?.model ?? step.target}`;
}

/** Codes of failures that happen before the tool is called: they are no tool call. */
export const NOT_CALLED: ReadonlySet<string> = new Set(['VALIDATION_FAILED', 'APPROVAL_DENIED', 'TOOL_NOT_FOUND', 'INPUT_INVALID']);

/** A run stopped by its caller (not by a failing step) ended as `cancelled`. */
export function isCancellation(error: { readonly code: string; readonly step?: string } | undefined): boolean {
  return error !== undefined && error.code === 'ABORTED' && error.step === undefined;
}
