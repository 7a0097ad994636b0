import type { ChainPlan } from '../compiler/plan.js';
import type { RunError } from './events.js';
import { isFinal, type StepState } from './step-state.js';
import type { RunResult, StepSummary } from './types.js';

// What a finished run returns (SPEC §5, §6): its outputs, or why it failed, and one line per step.

export function runResult(plan: ChainPlan, runId: string, states: readonly StepState[], context: Record<string, unknown>, failure: RunError | undefined, durationMs: number): RunResult {
  let error = failure;
  let outputs: unknown = null;
  if (error === undefined) {
    try {
      outputs = runOutputs(plan, states, context);
    } catch (thrown) {
      error = { code: 'RESULT_INVALID', message: `the chain's outputs could not be computed: ${(thrown as Error).message}` };
    }
  }
  // The step summaries are built when first read: most callers of a quick run read its outputs
  // only, and eleven objects per run of ten steps were a tenth of its cost. An own enumerable
  // getter: JSON, spread, structuredClone and deep equality see a plain `steps` property.
  let steps: Record<string, StepSummary> | undefined;
  return {
    run_id: runId,
    chain: plan.name,
    status: error === undefined ? 'succeeded' : 'failed',
    outputs,
    error,
    get steps() {
      return (steps ??= summaries(plan, states));
    },
    duration_ms: durationMs,
  };
}

/** SPEC §2.1: the `outputs` map, or the output of the last step in the file that ran. */
function runOutputs(plan: ChainPlan, states: readonly StepState[], context: Record<string, unknown>): unknown {
  if (plan.outputs) return plan.outputs.get(context);
  for (let i = plan.steps.length - 1; i >= 0; i--) {
    const s = states[i]!.status;
    if (s === 'succeeded' || s === 'failed') return context[plan.steps[i]!.name] ?? null;
  }
  return null;
}

function summaries(plan: ChainPlan, states: readonly StepState[]): Record<string, StepSummary> {
  const out: Record<string, StepSummary> = {};
  for (let i = 0; i < plan.steps.length; i++) {
    const state = states[i]!;
    out[plan.steps[i]!.name] =
      isFinal(state)
        ? { status: state.status, attempts: state.record.attempts, duration_ms: state.record.duration_ms, error: state.record.error }
        : { status: 'pending', attempts: 0, duration_ms: 0, error: undefined };
  }
  return out;
}
