import { didYouMean, suggestionSuffix } from '../../common/errors.js';
import { isRecord, type JsonSchema } from '../../common/json.js';
import type { FlowValue, PathStep, StepFlow } from './flow-facts.js';
import { ANY, describeTypes, elementOf, memberOf, typeOfValue, typesOf } from './schema-shape.js';

// What a value in an input_map or `outputs` will be, as a JSON Schema, given what each producer
// declares: chain inputs their schemas, tool steps their tool's `returns`, sub-chain steps their
// chain's inferred outputs. Following a path through a producer that lists its fields finds the
// reads that cannot work (`$.locate.cty`) before anything runs.

/** What the check knows of a tool: its manifest's (or registerTool's) schemas. */
export interface ToolSignature {
  readonly parameters?: JsonSchema;
  readonly returns?: JsonSchema;
}

/** What the check knows of a chain run as a sub-chain: its inputs, and the schema of its outputs. */
export interface ChainSignature {
  readonly inputs: JsonSchema;
  readonly outputs: JsonSchema;
}

export interface Signatures {
  tool(name: string): ToolSignature | undefined;
  chain(name: string): ChainSignature | undefined;
}

/** An agent step's output. */
const AGENT_OUTPUT: JsonSchema = {
  type: 'object',
  required: ['text', 'turns', 'stop_reason', 'usage', 'transcript'],
  properties: { text: { type: 'string' }, turns: { type: 'integer' }, stop_reason: { type: 'string' }, usage: { type: 'object' }, transcript: { type: 'array' }, transcript_omitted: { type: 'integer' } },
};
/** A waiting step's output: a sleep's end, an event's payload (anything), a person's decision. */
const WAIT_OUTPUT: Readonly<Record<'sleep' | 'event' | 'approval', JsonSchema>> = {
  sleep: { type: 'object', required: ['slept_until'], properties: { slept_until: { type: 'string' } } },
  event: ANY,
  approval: {
    type: 'object',
    required: ['approved', 'by', 'comment', 'at'],
    properties: { approved: { type: 'boolean' }, by: { type: 'string' }, comment: { type: ['string', 'null'] }, at: { type: 'string' } },
  },
};
const ERROR_OUTPUT: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } },
};

/** The schema of a literal: its type, and the value itself for enum checks. */
export function literalSchema(value: unknown): JsonSchema {
  return { type: typeOfValue(value) };
}

/** The schema of what a step writes into the run context under its name. */
export function stepOutput(step: StepFlow, signatures: Signatures): JsonSchema {
  const t = step.target;
  let one: JsonSchema =
    t.kind === 'agent'
      ? AGENT_OUTPUT
      : t.kind === 'wait'
        ? WAIT_OUTPUT[t.wait]
        : t.kind === 'tool'
          ? (signatures.tool(t.name)?.returns ?? ANY)
          : (signatures.chain(t.name)?.outputs ?? ANY);
  if (step.onError === 'continue') one = { anyOf: [one, ERROR_OUTPUT] };
  if (step.fallback?.hasOutput) one = { anyOf: [one, literalSchema(step.fallback.output)] };
  return step.forEach ? { type: 'array', items: one } : one;
}

/** Names a path's root may refer to, with their schemas (inputs, steps, and in a for_each `item`/`index`). */
export type Scope = ReadonlyMap<string, JsonSchema>;

export interface Resolved {
  readonly schema: JsonSchema;
  /** A field the path reads that the producer does not have, worded for the diagnostic. */
  readonly problem?: { readonly message: string; readonly suggestion?: string };
  /** The path's root names nothing in scope (reported by the compiler already). */
  readonly unknownRoot?: boolean;
}

export function resolveValue(value: FlowValue, scope: Scope): Resolved {
  switch (value.kind) {
    case 'literal':
      return { schema: literalSchema(value.value) };
    case 'template':
      return { schema: { type: 'string' } };
    case 'array':
      return { schema: { type: 'array' } };
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      for (const e of value.entries) properties[e.key] = resolveValue(e.value, scope).schema;
      return { schema: { type: 'object', properties } };
    }
    case 'path':
      return resolvePath(value, scope);
  }
}

function resolvePath(value: Extract<FlowValue, { kind: 'path' }>, scope: Scope): Resolved {
  const wrap = (s: JsonSchema): JsonSchema => (value.multi ? { type: 'array', items: s } : s);
  if (value.root === undefined || value.steps === undefined) return { schema: wrap(ANY) };
  const start = scope.get(value.root);
  if (!start) return { schema: wrap(ANY), unknownRoot: true };
  let schema = start;
  let walked = `$.${value.root}`;
  for (const step of value.steps.slice(1)) {
    const next = follow(schema, step, walked, value.source);
    if ('problem' in next) return { schema: ANY, problem: next.problem };
    schema = next.schema;
    walked += typeof step === 'string' ? `.${step}` : typeof step === 'number' ? `[${step}]` : '[*]';
  }
  return { schema: wrap(schema) };
}

function follow(schema: JsonSchema, step: PathStep, walked: string, source: string): { schema: JsonSchema } | { problem: { message: string; suggestion?: string } } {
  if (typeof step === 'string') {
    const m = memberOf(schema, step);
    if (m.kind === 'found') return { schema: m.schema };
    if (m.kind === 'not-object') return { problem: { message: `${source} reads '${step}' of ${walked}, which is ${article(describeTypes(m.types))}, not an object` } };
    const suggestion = didYouMean(step, m.known);
    const known = m.known.length ? `; it has ${m.known.slice(0, 12).join(', ')}${m.known.length > 12 ? ', …' : ''}` : '';
    return { problem: { message: `${source} reads '${step}', but ${walked} has no such field${suggestionSuffix(suggestion)}${known}`, ...(suggestion ? { suggestion } : {}) } };
  }
  const element = elementOf(schema, typeof step === 'number' ? step : undefined);
  if (element) return { schema: element };
  return { problem: { message: `${source} indexes ${walked}, which is ${article(describeTypes(typesOf(schema)))}, not an array` } };
}

export function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The element schema of an array schema (for `$.item`), or any. */
export function itemSchema(array: JsonSchema): JsonSchema {
  const element = elementOf(array);
  return element && isRecord(element) ? element : ANY;
}
