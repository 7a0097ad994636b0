import type { ChainPlan } from '../compiler/plan.js';
import { isCancellation, type RunError, type RunResult, type StepSummary } from '../run-model/result.js';
import { isFinal, type StepState } from './step-state.js';

// What a finished run returns: its outputs, or why it failed, and one line per step.

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
  const status = endStatusOf(error);
  // A short chain's step summaries are built at once; a long chain's when `steps` is first read,
  // through an own enumerable getter (JSON, spread, structuredClone and deep equality see a plain
  // property either way). An object literal with an accessor is made by the runtime: for runs of 5
  // and 10 quick steps it cost 12–19% of the run, more than building the summaries (bench/executor.ts,
  // measured in one process against the other build, both orders), while at 100 steps and more
  // building them cost 11–30% and the getter far less.
  if (plan.steps.length <= EAGER_SUMMARIES) {
    return { run_id: runId, chain: plan.name, status, outputs, error, steps: summaries(plan, states), duration_ms: durationMs };
  }
  let steps: Record<string, StepSummary> | undefined;
  return {
    run_id: runId,
    chain: plan.name,
    status,
    outputs,
    error,
    get steps() {
      return (steps ??= summaries(plan, states));
    },
    duration_ms: durationMs,
  };
}

/** How a run that ended with this error (or none) ended. */
export function endStatusOf(error: RunError | undefined): RunResult['status'] {
  return error === undefined ? 'succeeded' : error.code === 'RUN_WAITING' ? 'waiting' : isCancellation(error) ? 'cancelled' : 'failed';
}

/** Up to this many steps, a result's step summaries are built with it (runResult says why). */
const EAGER_SUMMARIES = 16;

/** The `outputs` map, or the output of the last step in the file that ran. */
function runOutputs(plan: ChainPlan, states: readonly StepState[], context: Record<string, unknown>): unknown {
  if (plan.outputs) return plan.outputs.get(context);
  for (let i = plan.steps.length - 1; i >= 0; i--) {
    const s = states[i]!.status;
    if (s === 'succeeded' || s === 'failed') return context[plan.steps[i]!.name] ?? null;
  }
  return null;
}

function summaries(plan: ChainPlan, states: readonly StepState[]): Record<string, StepSummary> {
  const phase = plan.phase;
  if (phase === undefined && allQuick(states)) return quickSummaries(plan);
  const out: Record<string, StepSummary> = {};
  for (let i = 0; i < plan.steps.length; i++) {
    const state = states[i]!;
    const summary: StepSummary =
      isFinal(state)
        ? { status: state.status, attempts: state.record.attempts, duration_ms: state.record.duration_ms, error: state.record.error }
        : { status: state.status === 'waiting' ? 'waiting' : 'pending', attempts: 0, duration_ms: 0, error: undefined };
    out[plan.steps[i]!.name] = phase === undefined ? summary : { ...summary, phase };
  }
  return out;
}

/**
 * A run whose every step succeeded at its first attempt in the millisecond it started has the
 * same summaries as every other such run of its plan: they are made once per plan, frozen, and
 * shared. Building them (six objects, five stores under names that differ per step) was 7% of a
 * 5-step run of quick tools; checking for this case costs a few comparisons per step.
 */
function allQuick(states: readonly StepState[]): boolean {
  for (let i = 0; i < states.length; i++) {
    const state = states[i]!;
    if (state.status !== 'succeeded' || state.record.attempts !== 1 || state.record.duration_ms !== 0) return false;
  }
  return true;
}

const QUICK: StepSummary = Object.freeze({ status: 'succeeded', attempts: 1, duration_ms: 0, error: undefined });
const quick = new WeakMap<ChainPlan, Readonly<Record<string, StepSummary>>>();

function quickSummaries(plan: ChainPlan): Record<string, StepSummary> {
  let made = quick.get(plan);
  if (made === undefined) {
    const out: Record<string, StepSummary> = {};
    for (const step of plan.steps) out[step.name] = QUICK;
    made = Object.freeze(out);
    quick.set(plan, made);
  }
  return made;
}
