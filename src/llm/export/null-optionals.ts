import type { JsonSchema } from '../../common/json.js';
import { allowsNull } from './strict-schema.js';
import { isRecord } from '../../common/json.js';
import { defineOwn } from '../../common/define-own.js';

// The way back from strict mode's nullable optionals: a model that must send every property sends
// null for the ones it means to leave out. Before validation, such a null is removed — but only
// for a property the schema does not require and whose own schema does not accept null, so the
// tool sees "not given" and its default applies. Applied to every call (a model without strict
// mode that sends null for an optional property means the same thing). Copies on write; the
// caller's object is never changed.

type Args = Record<string, unknown>;


function propertiesOf(schema: unknown): Record<string, unknown> | undefined {
  if (!isRecord(schema)) return undefined;
  return isRecord(schema.properties) ? schema.properties : undefined;
}

function clean(value: unknown, schema: unknown, depth: number): unknown {
  if (depth > 32 || !isRecord(schema)) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = clean(item, schema.items, depth + 1);
      if (next !== item) (out ??= [...value])[i] = next;
    });
    return out ?? value;
  }
  const properties = propertiesOf(schema);
  if (!isRecord(value) || properties === undefined) return value;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  let out: Args | undefined;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(properties, key)) continue;
    const member = value[key];
    const sub = properties[key];
    if (member === null && !required.has(key) && !allowsNull(sub)) {
      out ??= { ...value };
      delete out[key];
      continue;
    }
    const next = clean(member, sub, depth + 1);
    if (next !== member) {
      out ??= { ...value };
      defineOwn(out, key, next);
    }
  }
  return out ?? value;
}

export function dropNullOptionals(args: Args, schema: JsonSchema): Args {
  return clean(args, schema, 0) as Args;
}
