import { isRecord, type JsonSchema } from '../../common/json.js';
import type { ChainFlow } from './flow-facts.js';
import { resolveValue, stepOutput, type Signatures } from './resolve-value.js';
import { ANY } from './schema-shape.js';

// A chain's outputs as a JSON Schema, inferred from what its `outputs` read, so that a
// sub-chain step is checked like a tool step and `tools export` can say what a chain returns.
// Without `outputs` the result is the last step's output (when that step always runs).

export function inferOutputs(flow: ChainFlow, signatures: Signatures): JsonSchema {
  const scope = new Map<string, JsonSchema>();
  const inputProps = isRecord(flow.inputs.properties) ? flow.inputs.properties : {};
  for (const [name, schema] of Object.entries(inputProps)) if (isRecord(schema)) scope.set(name, schema);
  for (const step of flow.steps) scope.set(step.name, stepOutput(step, signatures));
  if (!flow.outputs) {
    const last = flow.steps[flow.steps.length - 1];
    return last && !last.hasWhen ? scope.get(last.name)! : ANY;
  }
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const e of flow.outputs) {
    properties[e.key] = resolveValue(e.value, scope).schema;
    // Literals and templates are always there; a path can miss (a skipped step, an optional field).
    if (e.value.kind === 'literal' || e.value.kind === 'template') required.push(e.key);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}
