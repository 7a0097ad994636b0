import type { ChainPlan, HandlerPlans, PlanStep } from '../compiler/plan.js';
import type { ToolSet } from '../registry/types.js';
import type { RunError, RunResult, StepSummary } from '../run-model/result.js';
import { elementScope } from './run-context.js';
import { Run } from './run.js';
import { isFinal } from './step-state.js';
import type { StepRecord } from '../run-model/step-record.js';
import type { ExecutionOptions, ExecutorHost, RunScope } from './types.js';
import type { RunControl, StepRecorder, Stoppable } from '../run-model/recording.js';

// A run of a chain with failure handling: its steps, then — once they have really ended, not
// while the run is parked on a wait — its handlers, each a run of its own plan, as a sub-chain is,
// inside the run: the on_failure steps (when it failed), the compensations of the steps that had
// succeeded, one at a time in the reverse order of their completion (when it failed), then the
// finally steps (whatever its end). Handler steps are recorded under their own names and
// compensations under `STEP~compensate`, restored on a resume like any step. Before the first
// handler starts, the end of the steps is recorded (STEPS_ENDED): a resumed run that finds it
// goes on with the handlers and never runs its steps again. What a handler does never changes the
// run's error; only a compensation that fails for good changes its status, to
// `compensation_failed`. A chain without any of this runs as a plain Run, with nothing added.

/** The record that says a run's steps have ended and how (under the run's key prefix): its handlers come next. */
export const STEPS_ENDED = '~end';

/** What STEPS_ENDED records in its output. */
interface StepsEnded {
  readonly status: RunResult['status'];
  readonly error: RunError | undefined;
}

/** Runs `plan` with `input` in `scope` (undefined for a top-level run): its steps, then its failure handling. */
export function runChain(host: ExecutorHost, plan: ChainPlan, options: ExecutionOptions, scope: RunScope | undefined, tools: ToolSet, input: unknown): Promise<RunResult> {
  const run = new Run(host, plan, options, scope, runChain);
  if (plan.handlers === undefined) return run.start(tools, input);
  return withHandlers(run, plan.handlers, tools, input);
}

async function withHandlers(run: Run, handlers: HandlerPlans, tools: ToolSet, input: unknown): Promise<RunResult> {
  const recorded = run.options.restored?.get(run.keyPrefix + STEPS_ENDED);
  const before = recorded !== undefined ? (recorded.output as StepsEnded) : undefined;
  const steps = await run.start(tools, input, before);
  // Refused before it began, parked on a wait, suspended at a distributed for_each, or its store
  // lost: nothing to handle (yet, or here).
  if (!run.began || steps.status === 'waiting' || steps.error?.code === 'RUN_SUSPENDED' || isStoreError(steps.error)) return told(run, steps);
  const failed = steps.status === 'failed';
  const due = failed ? compensationOrder(run, handlers) : [];
  // Nothing to run (a run that succeeded with compensations but no finally): nothing recorded either.
  if (handlers.finally === undefined && !(failed && (handlers.onFailure !== undefined || due.length > 0))) return told(run, steps);
  const error = steps.error === undefined ? undefined : errorOf(steps.error);
  if (before === undefined) {
    const ended: StepsEnded = { status: steps.status, error };
    const at = run.clock.now();
    const record: StepRecord = { step: STEPS_ENDED, index: -1, status: 'succeeded', attempts: 0, output: ended, error: undefined, started_at: run.startedAt, duration_ms: at - run.startedAt, fallback: undefined, reason: undefined };
    run.options.recorder?.record(run.keyPrefix + STEPS_ENDED, record);
    if (await notWritten(run.options.recorder)) return told(run, storeFailed(steps));
  }
  const parts: RunResult[] = [];
  const context = { ...run.context };
  let compensationFailed = false;
  const go = async (plan: ChainPlan, adds: Record<string, unknown>): Promise<RunResult> => {
    const part = await handlerRun(run, plan, { ...context, ...adds });
    parts.push(part);
    return part;
  };
  if (failed) {
    if (handlers.onFailure) await go(handlers.onFailure, { error });
    for (const i of due) {
      if (lost(parts) || (await notWritten(run.options.recorder))) break;
      const part = await go(handlers.compensations[i]!, { error, this: run.context[run.plan.steps[i]!.name], this_input: inputOf(run.plan.steps[i]!, run.context) });
      if (part.status !== 'succeeded') compensationFailed = true;
    }
  }
  const status: RunResult['status'] = compensationFailed ? 'compensation_failed' : steps.status;
  if (handlers.finally && !lost(parts) && !(await notWritten(run.options.recorder))) await go(handlers.finally, error === undefined ? { status } : { status, error });
  const at = run.clock.now();
  const store = parts.find((p) => isStoreError(p.error))?.error;
  const all: Record<string, StepSummary> = { ...steps.steps };
  for (const p of parts) Object.assign(all, p.steps);
  const result: RunResult = store
    ? { ...steps, status: 'failed', outputs: null, error: store, steps: all, duration_ms: at - run.startedAt }
    : { ...steps, status, steps: all, duration_ms: at - run.startedAt };
  run.announce(result, at);
  return result;
}

/** The steps' end as the run's, told now that nothing follows. */
function told(run: Run, result: RunResult): RunResult {
  run.announce(result, run.clock.now());
  return result;
}

/** `$.error`: the run's error as handlers read it (no stack). */
function errorOf(e: RunError): RunError {
  return e.step !== undefined ? { code: e.code, message: e.message, step: e.step } : { code: e.code, message: e.message };
}

/**
 * The steps to compensate: those that succeeded and have a compensation, the last to end first.
 * Ended is when the record says (it holds across a resume); ties — steps that ended in the same
 * millisecond — go by the order they ended in: records from before a resume in the order they were
 * recorded, before those of this execution in the order they ended.
 */
function compensationOrder(run: Run, handlers: HandlerPlans): number[] {
  const recordOf = (i: number): StepRecord | undefined => {
    const state = run.state(i);
    return isFinal(state) && state.status === 'succeeded' ? state.record : undefined;
  };
  const restored = run.options.restored;
  const rank = new Map<number, number>();
  let k = 0;
  if (restored !== undefined) {
    const byKey = new Map<string, number>();
    for (const [i, step] of run.plan.steps.entries()) byKey.set(run.keyPrefix + step.name, i);
    for (const [key, record] of restored) {
      const i = byKey.get(key);
      // A step restored from this record (not one that ran again in this execution).
      if (i !== undefined && recordOf(i) === record) rank.set(i, k);
      k++;
    }
  }
  for (const i of run.completions ?? []) if (!rank.has(i)) rank.set(i, k++);
  const ended = (i: number): number => recordOf(i)!.started_at + recordOf(i)!.duration_ms;
  const due = handlers.compensations.flatMap((c, i) => (c !== undefined && recordOf(i) !== undefined ? [i] : []));
  return due.sort((a, b) => ended(b) - ended(a) || (rank.get(b) ?? -1) - (rank.get(a) ?? -1));
}

/** `$.this_input` of a step's compensation: its input_map resolved against the run (per element, for a for_each step). */
function inputOf(step: PlanStep, context: Record<string, unknown>): unknown {
  try {
    if (step.forEach === undefined) return step.input.get(context);
    const items = step.forEach.items.get(context);
    return Array.isArray(items) ? items.map((item, index) => step.input.get(elementScope(context, item, index))) : undefined;
  } catch {
    // Resolved once already, when the step ran; a path that fails now leaves it out.
    return undefined;
  }
}

/**
 * A handler's run: the handler's plan, inside its run (same id, key prefix, recorder and restored
 * results, listener, approver and mocks), not cancellable (a cancel has been heard by the steps;
 * a handler's own timeouts bound it) and with nothing to park on. A sub-chain's handlers keep its
 * signal: they are part of the attempt of the step that runs the sub-chain, and stop with it.
 */
function handlerRun(run: Run, plan: ChainPlan, context: Record<string, unknown>): Promise<RunResult> {
  const o = run.options;
  const options: ExecutionOptions = {
    signal: run.parent !== undefined ? o.signal : undefined,
    onEvent: o.onEvent,
    approve: o.approve,
    concurrency: o.concurrency,
    debug: o.debug,
    onProgress: o.onProgress,
    runId: run.runId,
    recorder: o.recorder,
    restored: o.restored,
    control: o.control && shielded(o.control),
    mocks: o.mocks,
  };
  return new Run(run.host, plan, options, run.scope, runChain).start(run.bound.tools, context);
}

/** The run's control, for a handler: it still stops for a store that cannot be written or a new owner, not for a cancel. */
function shielded(control: RunControl): RunControl {
  return {
    bind(run: Stoppable) {
      control.bind({ halt: (reason) => (reason.code === 'ABORTED' ? undefined : run.halt(reason)) });
    },
  };
}

/** Waits until every result recorded so far is written; true if it never will be (the store failed). */
function notWritten(recorder: StepRecorder | undefined): Promise<boolean> | boolean {
  const when = recorder?.whenRecorded;
  if (when === undefined) return false;
  return new Promise((resolve) => when(resolve));
}

function isStoreError(error: RunError | undefined): boolean {
  return error !== undefined && (error.code === 'STORE_FENCED' || error.code === 'STORE_WRITE_FAILED' || error.code === 'STORE_UNAVAILABLE');
}

/** A handler lost its store: nothing more can be recorded, so nothing more runs here. */
function lost(parts: readonly RunResult[]): boolean {
  return parts.some((p) => isStoreError(p.error));
}

function storeFailed(result: RunResult): RunResult {
  return { ...result, status: 'failed', outputs: null, error: { code: 'STORE_WRITE_FAILED', message: `the end of run ${result.run_id}'s steps could not be recorded; its failure handling runs when it is resumed` } };
}
