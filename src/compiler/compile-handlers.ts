import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { Compensate } from './chain-file.generated.js';
import type { RawStep } from './compile-step.js';
import type { ChainInputs, ChainPlan, PlanStep } from './plan.js';
import type { HandlerPhase } from '../run-model/result.js';

// What failure handling adds to a chain's plan: the `on_failure` and `finally` lists, each
// compiled into a plan of its own, and each step's `compensate`, compiled into a plan of one step.
// The executor runs them like sub-chains of the run once its steps have ended (run-chain.ts), so
// nothing of the main steps' scheduler changes. Their inputs are what they read of the run: its
// context (chain inputs and step outputs), `error`, `status`, and for a compensation `this` and
// `this_input`. None of these names makes a DAG edge: everything they name has ended already.

/** The names a handler reads that are not steps of its own list. */
export const ERROR_NAME = 'error';
export const STATUS_NAME = 'status';
export const THIS_NAME = 'this';
export const THIS_INPUT_NAME = 'this_input';

/** Where the names a handler adds to the run context come from, for messages. */
export const ADDED_NAMES: Readonly<Record<string, string>> = {
  [ERROR_NAME]: "'$.error' exists only in on_failure and finally steps and in compensations",
  [STATUS_NAME]: "'$.status' exists only in finally steps",
  [THIS_NAME]: "'$.this' exists only in a step's compensate input_map",
  [THIS_INPUT_NAME]: "'$.this_input' exists only in a step's compensate input_map",
};

/** Suffix of a compensation's step name: `pay~compensate` (a `~` no step name can have). */
export const COMPENSATE_SUFFIX = '~compensate';

/** A handler plan reads an open object: the run's context, which the executor hands it as it is. */
const OPEN_INPUTS: ChainInputs = Object.freeze({ schema: Object.freeze({ type: 'object' }), names: Object.freeze([]) as readonly string[] });

/** A step's `compensate` as the step it is compiled as: named `STEP~compensate`, with its own input_map, retry and timeout. */
export function compensationStep(step: RawStep): RawStep | undefined {
  const c: Compensate | undefined = step.compensate;
  if (c === undefined || (typeof c.tool !== 'string' && typeof c.chain !== 'string')) return undefined;
  const target = c.tool !== undefined ? { tool: c.tool } : { chain: c.chain! };
  return {
    name: `${step.name}${COMPENSATE_SUFFIX}`,
    ...target,
    ...(c.input_map !== undefined ? { input_map: c.input_map } : {}),
    ...(c.retry !== undefined ? { retry: c.retry } : {}),
    ...(c.timeout !== undefined ? { timeout: c.timeout } : {}),
  } as RawStep;
}

/** Problems of a handler list's step, or of a step's `compensate`, that the step language otherwise allows. */
export function checkHandlerStep(raw: RawStep, pointer: string, phase: 'steps' | 'on_failure' | 'finally', sink: DiagnosticSink): void {
  const waits = raw.sleep !== undefined || raw.sleep_until !== undefined || raw.wait_for !== undefined || raw.approval !== undefined;
  // A repeat sleeps between its rounds: a handler's would have to park too.
  if (phase !== 'steps' && (waits || raw.repeat !== undefined)) {
    sink.error('HANDLER_CANNOT_WAIT', pointer, `${phase} step '${raw.name}' waits (${waitKey(raw)}): failure handling runs once the run has ended, and cannot be parked; do the waiting in the steps, or call a tool that notifies someone`);
  }
  if (phase === 'finally' && raw.on_error === 'fail') {
    sink.error('BAD_VALUE', `${pointer}/on_error`, `finally step '${raw.name}' sets on_error: fail, but a failing finally step never stops the others: its failure is recorded and its dependents read { error } (on_error: continue, the default in finally)`);
  }
  if (raw.compensate === undefined) return;
  if (phase !== 'steps') sink.error('COMPENSATE_NOT_ALLOWED', `${pointer}/compensate`, `${phase} step '${raw.name}' has compensate: only the chain's steps are compensated, once on_failure has run`);
  else if (waits) sink.error('COMPENSATE_NOT_ALLOWED', `${pointer}/compensate`, `step '${raw.name}' waits (${waitKey(raw)}), which leaves nothing to undo; put compensate on the step whose effect it undoes`);
}

function waitKey(raw: RawStep): string {
  return raw.sleep !== undefined ? 'sleep' : raw.sleep_until !== undefined ? 'sleep_until' : raw.wait_for !== undefined ? 'wait_for' : raw.approval !== undefined ? 'approval' : 'repeat, between its rounds';
}

/** The plan of a handler list or of one compensation: the chain's identity, its own steps and graph. */
export function handlerPlan(
  chain: Pick<ChainPlan, 'name' | 'file' | 'hash' | 'flow'>,
  phase: HandlerPhase,
  steps: readonly PlanStep[],
  graph: { readonly order: readonly number[]; readonly roots: readonly number[] },
  tools: readonly string[],
  chains: readonly string[],
): ChainPlan {
  return Object.freeze({
    name: chain.name,
    file: chain.file,
    hash: chain.hash,
    inputs: OPEN_INPUTS,
    steps: Object.freeze([...steps]),
    order: Object.freeze([...graph.order]),
    roots: Object.freeze([...graph.roots]),
    waitCounts: Object.freeze(steps.map((s) => s.waitsFor.length)),
    // Handlers get no waits to park on (a wait in a handler's sub-chain fails): nothing of them waits.
    mayWait: false,
    tools: Object.freeze([...new Set(tools)]),
    chains: Object.freeze([...new Set(chains)]),
    flow: chain.flow,
    phase,
  });
}
