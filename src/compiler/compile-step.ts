import { compileCondition, compilePath, compileValue, ExprSyntaxError } from '../expr/index.js';
import { parseDuration } from '../expr/duration.js';
import { compileWait, keyedInput, waitInput, waitLabel } from './compile-wait.js';
import type { CompiledValue, ExprProblem, PathRef } from '../expr/types.js';
import type { Step, StepKind } from './chain-file.generated.js';
import { agentMessages, compileAgent } from './compile-agent.js';
import { compileFallback, compileRetry } from './compile-policies.js';
import { compileRepeat } from './compile-repeat.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { PlanStep } from './plan.js';

// One step's policies and expressions, compiled to the closures a run calls. Graph fields are
// filled in by compile-chain once every step is known.

export type RawStep = Step & StepKind;

export type CompiledStepBody = Omit<PlanStep, 'waitsFor' | 'skipsWith' | 'dependents' | 'line' | 'col'>;

const EMPTY: CompiledValue = compileValue({}).value;

function offsetOf(problem: ExprProblem): { offset?: number } {
  return problem.offset !== undefined ? { offset: problem.offset } : {};
}

/** `pointer`: where the step is written (`/steps/2`, `/on_failure/0`, `/steps/2/compensate` for a compensation). */
export function compileStep(raw: RawStep, index: number, sink: DiagnosticSink, pointer = `/steps/${index}`): { body: CompiledStepBody; refs: PathRef[] } {
  const refs: PathRef[] = [];
  const value = (v: unknown, at: string): CompiledValue => {
    if (v === undefined) return EMPTY;
    const { value: compiled, problems } = compileValue(v, at);
    for (const p of problems) sink.error(p.code, at + p.pointer, p.message, offsetOf(p));
    for (const r of compiled.refs) refs.push({ ...r, pointer: at + r.pointer });
    return compiled;
  };

  // An agent's `prompt` and `system` are its arguments: resolved per run, and read like an input_map.
  const agent = raw.agent !== undefined ? compileAgent(raw.agent) : undefined;
  if (agent && raw.input_map !== undefined) {
    sink.error('BAD_VALUE', `${pointer}/input_map`, `step '${raw.name}' is an agent: its message comes from agent.prompt (a template or JSONPath), not input_map`);
  }
  const wait = compileWait(raw, pointer, sink);
  const read = wait ? waitInput(raw, pointer) : undefined;
  const input = agent
    ? value(agentMessages(raw.agent!), `${pointer}/agent`)
    : wait
      ? read === undefined
        ? EMPTY
        : keyedInput(read.key, value(read.value, read.at))
      : value(raw.input_map, `${pointer}/input_map`);

  let when: PlanStep['when'];
  if (raw.when !== undefined) {
    const { condition, problems } = compileCondition(raw.when);
    for (const p of problems) sink.error(p.code, `${pointer}/when`, `'when' of step '${raw.name}': ${p.message}`, offsetOf(p));
    if (condition) {
      when = condition;
      for (const r of condition.refs) refs.push({ ...r, pointer: `${pointer}/when` });
    }
  }

  let forEach: PlanStep['forEach'];
  if (raw.for_each !== undefined) {
    try {
      const items = compilePath(raw.for_each);
      forEach = { items, ...(raw.max_concurrency !== undefined ? { maxConcurrency: raw.max_concurrency } : {}), ...(raw.distribute === true ? { distribute: true as const } : {}) };
      refs.push({ root: items.root, source: items.source, pointer: `${pointer}/for_each` });
      for (const root of items.filterRoots) refs.push({ root, source: items.source, pointer: `${pointer}/for_each` });
    } catch (err) {
      if (!(err instanceof ExprSyntaxError)) throw err;
      sink.error('BAD_JSONPATH', `${pointer}/for_each`, `bad JSONPath '${raw.for_each}' in for_each at character ${err.index + 1}: ${err.message}`, { offset: err.index });
    }
  } else if (raw.max_concurrency !== undefined) {
    sink.error('BAD_VALUE', `${pointer}/max_concurrency`, `step '${raw.name}' sets max_concurrency without for_each`);
  }

  // An element job carries its tool call's arguments; a sub-chain or an agent has no such call.
  if (raw.distribute === true && raw.tool === undefined) sink.error('BAD_VALUE', `${pointer}/distribute`, `step '${raw.name}' sets distribute, which needs a tool step with for_each (not chain: or agent:)`);

  // On a for_each step, a `when` that reads the element decides for each element.
  if (forEach && when?.refs.some((r) => r.root === 'item' || r.root === 'index')) forEach = { ...forEach, whenPerItem: true };

  // `fallback` under `retry`, or directly on the step.
  if (raw.fallback !== undefined && raw.retry?.fallback !== undefined) {
    sink.error('BAD_VALUE', `${pointer}/fallback`, `step '${raw.name}' has a fallback both on the step and under retry; keep one`);
  }
  const fallbackAt = raw.fallback !== undefined ? `${pointer}/fallback` : `${pointer}/retry/fallback`;
  const fb = raw.fallback ?? raw.retry?.fallback;
  const fallback = fb ? compileFallback(fb, (v, at) => value(v, `${fallbackAt}/${at}`)) : undefined;

  const { repeat, refs: repeatRefs } = compileRepeat(raw, pointer, sink);
  refs.push(...repeatRefs);

  const timeoutMs = parseDuration(raw.timeout);
  const body: CompiledStepBody = {
    index,
    name: raw.name,
    pointer,
    target: agent ? { kind: 'agent', agent } : wait ? { kind: 'wait', wait } : raw.tool !== undefined ? { kind: 'tool', tool: raw.tool } : { kind: 'chain', chain: raw.chain! },
    label: agent ? `agent ${agent.model}` : wait ? waitLabel(raw, wait) : raw.tool !== undefined ? raw.tool : `chain ${raw.chain!}`,
    input,
    ...(when ? { when } : {}),
    ...(forEach ? { forEach } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    retry: compileRetry(raw.retry),
    ...(fallback ? { fallback } : {}),
    ...(repeat ? { repeat } : {}),
    onError: raw.on_error ?? 'fail',
    parallel: raw.parallel ?? false,
  };
  return { body, refs };
}
