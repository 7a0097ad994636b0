import { isRecord, type JsonSchema } from '../../common/json.js';
import { childPointer } from '../../common/json-pointer.js';
import { parsePath } from '../../expr/path-parse.js';
import { isTemplate } from '../../expr/template.js';
import type { SourceMap } from '../../loader/types.js';

// What the data-flow check needs to know about a chain, taken from its document once,
// at compile time, as plain data: every input_map key with its value's shape (a literal, a
// JSONPath reduced to member/index/wildcard steps, a template) and where the key is written. The
// check itself (check-flow.ts) runs later, against the tools installed at that moment, like the
// tool-name check: a compiled chain stays valid (and cached) while plugins come and go.

/** One step of a path the checker can follow: a member, an index, or every element (`*`). */
export type PathStep = string | number | { readonly every: true };

export type FlowValue =
  | { readonly kind: 'literal'; readonly value: unknown }
  /** `steps` undefined: the path has recursive descent, a filter, a slice or a union (not followed). */
  | { readonly kind: 'path'; readonly source: string; readonly root: string | undefined; readonly steps: readonly PathStep[] | undefined; readonly multi: boolean }
  /** A template with text around its placeholders: always a string. */
  | { readonly kind: 'template'; readonly source: string }
  | { readonly kind: 'object'; readonly entries: readonly FlowEntry[] }
  | { readonly kind: 'array'; readonly items: readonly FlowValue[] };

export interface FlowEntry {
  readonly key: string;
  readonly pointer: string;
  /** Where the key is written. */
  readonly line: number;
  readonly col: number;
  readonly value: FlowValue;
}

export type FlowTarget =
  | { readonly kind: 'tool'; readonly name: string }
  | { readonly kind: 'chain'; readonly name: string }
  | { readonly kind: 'agent' }
  | { readonly kind: 'wait'; readonly wait: 'sleep' | 'event' | 'approval' };

export interface StepFlow {
  readonly name: string;
  readonly index: number;
  readonly pointer: string;
  readonly line: number;
  readonly col: number;
  readonly target: FlowTarget;
  /** The input_map's top-level keys (none for agents). */
  readonly args: readonly FlowEntry[];
  /** Where the `input_map` key is written (the step, without one): missing parameters are reported there. */
  readonly argsAt: { readonly line: number; readonly col: number };
  readonly forEach?: { readonly value: FlowValue; readonly line: number; readonly col: number };
  readonly fallback?: {
    readonly pointer: string;
    readonly tool?: string;
    readonly args: readonly FlowEntry[];
    readonly hasOutput: boolean;
    readonly output?: unknown;
  };
  readonly onError: 'fail' | 'continue';
  readonly hasWhen: boolean;
  /** The step's `compensate`, as the step it runs as (`NAME~compensate`). */
  readonly compensate?: StepFlow;
}

export interface ChainFlow {
  /** The chain's inputs as one object schema (properties by input name). */
  readonly inputs: JsonSchema;
  readonly steps: readonly StepFlow[];
  /** The `outputs` map's keys; undefined when the chain has none. */
  readonly outputs?: readonly FlowEntry[];
  /** The `on_failure` and `finally` steps, checked against the run's context plus `error` (and `status`). */
  readonly onFailure?: readonly StepFlow[];
  readonly finally?: readonly StepFlow[];
}

const SINGLE_PLACEHOLDER = /^\{\{\s*(\$[^{}]*?)\s*\}\}$/s;

/** The shape of one input_map / outputs value. Bad paths are left as literals: they are reported already. */
export function flowValue(value: unknown, pointer: string, map: SourceMap): FlowValue {
  if (typeof value === 'string') return stringValue(value);
  if (Array.isArray(value)) return { kind: 'array', items: value.map((v, i) => flowValue(v, childPointer(pointer, i), map)) };
  if (isRecord(value)) return { kind: 'object', entries: flowEntries(value, pointer, map) };
  return { kind: 'literal', value };
}

export function flowEntries(value: unknown, pointer: string, map: SourceMap): FlowEntry[] {
  if (!isRecord(value)) return [];
  return Object.keys(value).map((key) => {
    const at = childPointer(pointer, key);
    const { line, col } = map.keyAt(at);
    return { key, pointer: at, line, col, value: flowValue(value[key], at, map) };
  });
}

function stringValue(text: string): FlowValue {
  if (text.startsWith('$$')) return { kind: 'literal', value: text.slice(1) };
  if (text.startsWith('$')) return pathValue(text) ?? { kind: 'literal', value: text };
  if (!isTemplate(text)) return { kind: 'literal', value: text };
  const single = SINGLE_PLACEHOLDER.exec(text);
  return (single && pathValue(single[1]!)) || { kind: 'template', source: text };
}

export function pathValue(source: string): FlowValue | undefined {
  let parsed;
  try {
    parsed = parsePath(source);
  } catch {
    return undefined;
  }
  const steps: PathStep[] = [];
  let followable = true;
  for (const segment of parsed.query.segments) {
    const s = segment.selectors.length === 1 && !segment.descendant ? segment.selectors[0]! : undefined;
    if (s?.kind === 'name') steps.push(s.name);
    else if (s?.kind === 'index') steps.push(s.index);
    else if (s?.kind === 'wildcard') steps.push({ every: true });
    else followable = false;
  }
  return { kind: 'path', source, root: parsed.root, steps: followable ? steps : undefined, multi: parsed.multi };
}
