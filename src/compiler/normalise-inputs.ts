import { deepFreeze } from './deep-freeze.js';
import type { ChainInputs } from './plan.js';
import type { JsonSchema } from '../common/json.js';

// `inputs` accept a type name as shorthand; the executor and the exporters only ever see one JSON
// Schema object, so the shorthand is expanded here, once.

export function normaliseInputs(inputs: Record<string, unknown> | undefined): ChainInputs {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(inputs ?? {})) {
    const schema: JsonSchema = typeof spec === 'string' ? { type: spec } : { ...(spec as JsonSchema) };
    properties[name] = schema;
    if (!('default' in schema)) required.push(name);
  }
  const names = Object.keys(properties);
  return deepFreeze({
    schema: { type: 'object', properties, required, additionalProperties: false },
    names,
  });
}
