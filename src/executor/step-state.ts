import type { StepError } from '../common/errors.js';
import type { RetryReport } from '../call/index.js';
import type { FallbackKind, FinalStatus, SkipReason, StepRecord, StepStatus } from '../run-model/step-record.js';
import type { PlanStep } from '../compiler/plan.js';
import type { RunEvent } from '../run-model/events.js';
import type { Run } from './run.js';

// A step's life as data: an explicit state union, and one pure function that says what
// an input does to a state. The scheduler (run.ts) keeps one state per step, feeds it inputs, and
// performs the effects `effectsOf` names; the event a transition stands for is derived from it
// (`stepEvent`), and whether a ready step starts or is skipped is `skipReason`, at the end. A step
// reaches a final state only through `transition`, and the record that final state carries is
// exactly what a run store persists — so a resumed run is rebuilt by feeding stored records back
// in as `restore` inputs.
//
//   pending ─start→ validating ─attempt→ running ⇄ retrying
//      │                 └──────────────────┴─────────┴─succeed | fail | abort→ succeeded | failed
//      ├─skip→ skipped          └─park→ waiting (its wait is not over: the run parks once
//      │                                  nothing else is at work, and a later execution of the
//      │                                  run starts the step again, from pending)
//      └─restore→ succeeded | failed | skipped (a recorded result)

// The statuses and the record a final state carries are the run model's (run-model/step-record.ts).
export type StepState =
  | { readonly status: 'pending' }
  | { readonly status: 'validating'; readonly started_at: number }
  | { readonly status: 'running' | 'retrying'; readonly started_at: number; readonly attempt: number }
  | { readonly status: 'waiting'; readonly started_at: number }
  | { readonly status: FinalStatus; readonly record: StepRecord };

export type ActiveState = Extract<StepState, { status: 'validating' | 'running' | 'retrying' }>;
export type FinalState = Extract<StepState, { record: StepRecord }>;

/**
 * Every state is one of these, with all four fields (those a status has not undefined): one
 * object shape, so that the scheduler's many reads of `state.status` stay monomorphic. The union
 * type above is what the code sees.
 */
class State {
  constructor(
    readonly status: StepStatus,
    readonly started_at: number | undefined,
    readonly attempt: number | undefined,
    readonly record: StepRecord | undefined,
  ) {}
}

function active(status: 'validating' | 'running' | 'retrying', startedAt: number, attempt: number | undefined): StepState {
  return new State(status, startedAt, attempt, undefined) as StepState;
}

/** Not frozen: a frozen object has a shape of its own. Nothing writes to a state (the type says so). */
export const PENDING: StepState = new State('pending', undefined, undefined, undefined) as StepState;

export type StepInput =
  | { readonly type: 'start'; readonly at: number }
  /** An attempt began (the first one ends validation). */
  | { readonly type: 'attempt'; readonly attempt: number }
  /** An attempt failed and another (or the fallback) follows; `item` for one element of a for_each. */
  | { readonly type: 'retry'; readonly report: RetryReport; readonly item: number | undefined }
  | { readonly type: 'succeed'; readonly at: number; readonly output: unknown; readonly attempts: number; readonly fallback: FallbackKind | undefined }
  | { readonly type: 'fail'; readonly at: number; readonly error: StepError; readonly attempts: number }
  /** The run is stopping: a step still at work fails with the stop's error. */
  | { readonly type: 'abort'; readonly at: number; readonly error: StepError }
  | { readonly type: 'skip'; readonly at: number; readonly reason: SkipReason }
  /** What the step waits for is not over (a sleep, an event, a decision): it holds nothing until the run is woken. */
  | { readonly type: 'park'; readonly at: number; readonly wait: string }
  | { readonly type: 'restore'; readonly record: StepRecord };

// The `attempt` inputs of the first few attempts, made once: every step sends at least one.
const ATTEMPTS: readonly StepInput[] = Array.from({ length: 8 }, (_, k) => Object.freeze({ type: 'attempt', attempt: k + 1 }));

export function attemptInput(attempt: number): StepInput {
  return ATTEMPTS[attempt - 1] ?? { type: 'attempt', attempt };
}

export function startInput(at: number): StepInput {
  return { type: 'start', at };
}

export function succeedInput(at: number, output: unknown, attempts: number, fallback: FallbackKind | undefined): StepInput {
  return { type: 'succeed', at, output, attempts, fallback };
}

/** What of the plan step the transitions need. */
export interface StepRules {
  readonly name: string;
  readonly index: number;
  readonly onError: 'fail' | 'continue';
}

// By status, not `'record' in state` (every state has every field, some undefined): `in` over several shapes
// was a tenth of a quick step's cost; comparing interned strings is a pointer comparison.
export function isActive(state: StepState): state is ActiveState {
  const s = state.status;
  return s === 'running' || s === 'validating' || s === 'retrying';
}

export function isFinal(state: StepState): state is FinalState {
  const s = state.status;
  return s === 'succeeded' || s === 'failed' || s === 'skipped';
}

/** The next state, or undefined when the input does not apply (a late result after the step ended). */
export function transition(state: StepState, input: StepInput, step: StepRules): StepState | undefined {
  switch (input.type) {
    case 'start':
      return state.status === 'pending' ? active('validating', input.at, undefined) : undefined;
    case 'skip':
      return state.status === 'pending' ? final(step, 'skipped', input.at, input.at, 0, undefined, undefined, undefined, input.reason) : undefined;
    case 'restore':
      return state.status === 'pending' ? (new State(input.record.status, undefined, undefined, input.record) as StepState) : undefined;
    case 'attempt':
      if (!isActive(state)) return undefined;
      // for_each elements report their own attempts: the step counts the most any one needed.
      if (state.status === 'validating') return active('running', state.started_at, input.attempt);
      return active('running', state.started_at, Math.max(input.attempt, state.attempt));
    case 'retry':
      if (state.status !== 'running') return undefined;
      // An element retrying leaves its for_each step running.
      return input.item !== undefined ? state : active('retrying', state.started_at, state.attempt);
    case 'succeed':
      if (!isActive(state)) return undefined;
      return final(step, 'succeeded', state.started_at, input.at, input.attempts, input.output, undefined, input.fallback, undefined);
    case 'fail': {
      if (!isActive(state)) return undefined;
      const output = step.onError === 'continue' ? { error: { code: input.error.code, message: input.error.message } } : undefined;
      return final(step, 'failed', state.started_at, input.at, input.attempts, output, input.error, undefined, undefined);
    }
    case 'park':
      return isActive(state) ? (new State('waiting', state.started_at, undefined, undefined) as StepState) : undefined;
    case 'abort':
      if (!isActive(state)) return undefined;
      return final(step, 'failed', state.started_at, input.at, state.status === 'validating' ? 0 : state.attempt, undefined, input.error, undefined, undefined);
  }
}

function final(
  step: StepRules,
  status: FinalStatus,
  startedAt: number,
  at: number,
  attempts: number,
  output: unknown,
  error: StepError | undefined,
  fallback: FallbackKind | undefined,
  reason: SkipReason | undefined,
): FinalState {
  // Every key present (absent ones undefined, which JSON leaves out): one object shape for all records.
  const record: StepRecord = { step: step.name, index: step.index, status, attempts, output, error, started_at: startedAt, duration_ms: at - startedAt, fallback, reason };
  return new State(status, undefined, undefined, record) as FinalState;
}

// Effects, as bits: a transition names what the scheduler must do, and the scheduler does only that.
/** Emit the event the input stands for (when someone listens). */
export const EMIT = 1;
/** Hand the final record to the recorder (a run store). */
export const RECORD = 2;
/** Put the step's output in the run context, under its name. */
export const WRITE_OUTPUT = 4;
/** Give back the engine slot the step held. */
export const FREE_SLOT = 8;
/** Let the steps that wait for this one count it as done. */
export const RELEASE_DEPENDENTS = 16;
/** Stop the run: the step failed for good and `on_error` is `fail`. */
export const STOP_RUN = 32;

export function effectsOf(prev: StepState, next: StepState, input: StepInput, step: StepRules): number {
  if (input.type === 'attempt') return 0;
  if (input.type === 'park') return EMIT | FREE_SLOT;
  if (!isFinal(next)) return EMIT;
  const restored = input.type === 'restore';
  let effects = restored ? 0 : EMIT | RECORD;
  if (isActive(prev)) effects |= FREE_SLOT;
  if (next.record.output !== undefined || next.status === 'succeeded') effects |= WRITE_OUTPUT;
  if (next.status !== 'failed' || step.onError === 'continue') effects |= RELEASE_DEPENDENTS;
  else if (input.type === 'fail') effects |= STOP_RUN;
  return effects;
}

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

// The event a step transition stands for, built only when someone listens. Literals with
// every key present and no spreads: one object shape per event type keeps building them cheap;
// absent optional fields are undefined, which JSON leaves out.

export function stepEvent(run: Run, step: PlanStep, input: StepInput, next: StepState): RunEvent {
  const run_id = run.runId;
  const chain = run.plan.name;
  const parent = run.parent;
  if (input.type === 'start') {
    return { type: 'step:started', run_id, chain, timestamp: input.at, parent, step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase, attempt: 1 };
  }
  if (input.type === 'retry') {
    const r = input.report;
    return {
      type: 'step:retrying',
      run_id, chain, timestamp: run.clock.now(), parent,
      step: step.name, index: step.index, item: input.item, call: undefined, phase: run.phase,
      attempt: r.attempt, error: r.error, duration_ms: r.duration_ms, delay_ms: r.delay_ms, fallback: r.fallback,
    };
  }
  if (input.type === 'park') {
    return { type: 'step:waiting', run_id, chain, timestamp: input.at, parent, step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase, waiting_for: input.wait };
  }
  if (!isFinal(next)) throw new Error(`executor bug: no event for '${input.type}'`);
  const record = next.record;
  const timestamp = record.started_at + record.duration_ms;
  const { attempts, output, error, started_at, duration_ms, fallback } = record;
  switch (record.status) {
    case 'succeeded':
      return {
        type: 'step:succeeded',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'succeeded', attempt: attempts, attempts, output, error: undefined, started_at, duration_ms, fallback, reason: undefined,
      };
    case 'skipped':
      return {
        type: 'step:skipped',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'skipped', attempt: 0, attempts: 0, output: undefined, error: undefined, started_at, duration_ms: 0, fallback: undefined, reason: record.reason ?? 'when',
      };
    case 'failed':
      return {
        type: 'step:failed',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'failed', attempt: Math.max(1, attempts), attempts, output, error: error!, started_at, duration_ms, fallback: undefined, reason: undefined,
      };
  }
}
