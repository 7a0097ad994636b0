import type { JsonSchema } from '../../common/json.js';
import type { SourceMap } from '../../loader/types.js';
import { compensationStep } from '../compile-handlers.js';
import type { RawStep } from '../compile-step.js';
import { flowEntries, pathValue, type ChainFlow, type FlowTarget, type StepFlow } from './flow-facts.js';

// The facts of flow-facts.ts, read from a chain's (schema-checked) steps at compile time.

type Steps = readonly { raw: RawStep; index: number }[];

export function extractFlow(inputs: JsonSchema, steps: Steps, outputs: unknown, map: SourceMap, handlers: { onFailure?: Steps | undefined; finally?: Steps | undefined } = {}): ChainFlow {
  return {
    inputs,
    steps: steps.map(({ raw, index }) => withCompensation(stepFlow(raw, index, map, `/steps/${index}`), raw, map)),
    ...(outputs !== undefined ? { outputs: flowEntries(outputs, '/outputs', map) } : {}),
    ...(handlers.onFailure ? { onFailure: handlers.onFailure.map(({ raw, index }) => stepFlow(raw, index, map, `/on_failure/${index}`)) } : {}),
    ...(handlers.finally ? { finally: handlers.finally.map(({ raw, index }) => stepFlow(raw, index, map, `/finally/${index}`)) } : {}),
  };
}

function withCompensation(flow: StepFlow, raw: RawStep, map: SourceMap): StepFlow {
  const c = compensationStep(raw);
  return c === undefined ? flow : { ...flow, compensate: stepFlow(c, 0, map, `${flow.pointer}/compensate`) };
}

function stepFlow(raw: RawStep, index: number, map: SourceMap, pointer: string): StepFlow {
  const target: FlowTarget =
    raw.agent !== undefined
      ? { kind: 'agent' }
      : raw.sleep !== undefined || raw.sleep_until !== undefined
        ? { kind: 'wait', wait: 'sleep' }
        : raw.wait_for !== undefined
          ? { kind: 'wait', wait: 'event' }
          : raw.approval !== undefined
            ? { kind: 'wait', wait: 'approval' }
            : raw.tool !== undefined
              ? { kind: 'tool', name: raw.tool }
              : { kind: 'chain', name: raw.chain! };
  const fb = raw.fallback ?? raw.retry?.fallback;
  const fbPointer = raw.fallback !== undefined ? `${pointer}/fallback` : `${pointer}/retry/fallback`;
  const forEach = typeof raw.for_each === 'string' ? pathValue(raw.for_each) : undefined;
  const { line, col } = map.valueAt(pointer);
  return {
    name: raw.name,
    index,
    pointer,
    line,
    col,
    target,
    args: target.kind === 'agent' || target.kind === 'wait' ? [] : flowEntries(raw.input_map, `${pointer}/input_map`, map),
    argsAt: map.keyAt(`${pointer}/input_map`),
    ...(forEach ? { forEach: { value: forEach, ...map.valueAt(`${pointer}/for_each`) } } : {}),
    ...(fb
      ? {
          fallback: {
            pointer: fbPointer,
            ...(fb.tool !== undefined ? { tool: fb.tool } : {}),
            args: flowEntries(fb.input_map, `${fbPointer}/input_map`, map),
            hasOutput: 'output' in fb,
            ...('output' in fb ? { output: fb.output } : {}),
          },
        }
      : {}),
    onError: raw.on_error ?? (pointer.startsWith('/finally/') ? 'continue' : 'fail'),
    hasWhen: raw.when !== undefined,
  };
}
