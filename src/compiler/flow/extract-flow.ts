import type { JsonSchema } from '../../common/json.js';
import type { SourceMap } from '../../loader/types.js';
import type { RawStep } from '../compile-step.js';
import { flowEntries, pathValue, type ChainFlow, type FlowTarget, type StepFlow } from './flow-facts.js';

// The facts of flow-facts.ts, read from a chain's (schema-checked) steps at compile time.

export function extractFlow(inputs: JsonSchema, steps: readonly { raw: RawStep; index: number }[], outputs: unknown, map: SourceMap): ChainFlow {
  return {
    inputs,
    steps: steps.map(({ raw, index }) => stepFlow(raw, index, map)),
    ...(outputs !== undefined ? { outputs: flowEntries(outputs, '/outputs', map) } : {}),
  };
}

function stepFlow(raw: RawStep, index: number, map: SourceMap): StepFlow {
  const pointer = `/steps/${index}`;
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
    onError: raw.on_error ?? 'fail',
    hasWhen: raw.when !== undefined,
  };
}
