import type { ErrorObject } from 'ajv';
import { validateJsonSchema } from '../schemas/validators.js';

// A schema checked against the draft-07 meta-schema one schema object at a time, so that a part
// many schemas share is checked once. The meta-schema checks every subschema (under properties,
// items, allOf, …) against itself and nothing across levels, so checking each object with its
// subschemas stood in for by `true`, and then its subschemas the same way, finds exactly what
// checking the whole tree at once would. An object that passed is remembered when it cannot
// change any more — it is frozen, so are the lists and maps it holds, and so is everything below
// it — and is not checked again: tools generated from one document (an OpenAPI document's
// operations) share most of their types, and without this every tool would check the whole of
// every type it reaches. The memory belongs to one schema compiler, never to the process.

/** Keywords whose value is a map of names to subschemas. */
const MAPS = ['properties', 'patternProperties', 'definitions', 'dependencies'];
/** Keywords whose value is one subschema. */
const SINGLES = ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'if', 'then', 'else', 'not'];
/** Keywords whose value is a list of subschemas (`items` may also be one). */
const LISTS = ['allOf', 'anyOf', 'oneOf', 'items'];

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSchema = (v: unknown): boolean => isObj(v) || typeof v === 'boolean';

export type MetaCheck = (schema: object) => void;

export function createMetaCheck(): MetaCheck {
  const passed = new WeakSet<object>();

  function check(schema: unknown, path: string, problems: string[]): boolean {
    if (validateJsonSchema(schema)) return true;
    problems.push(...(validateJsonSchema.errors ?? []).map((e: ErrorObject) => `schema${path}${e.instancePath} ${e.message ?? 'is invalid'}`));
    return false;
  }

  /** Checks `schema` (at `path` in the whole) and what is below it; true when all of it passed and none of it can change. */
  function walk(schema: unknown, path: string, problems: string[]): { ok: boolean; fixed: boolean } {
    if (!isObj(schema)) return { ok: check(schema, path, problems), fixed: true };
    if (passed.has(schema)) return { ok: true, fixed: true };
    const below: [unknown, string][] = [];
    let shallow: Obj | undefined;
    const put = (key: string, value: unknown): void => {
      (shallow ??= { ...schema })[key] = value;
    };
    for (const key of MAPS) {
      const map = schema[key];
      if (!isObj(map)) continue;
      const stood: Obj = {};
      for (const [name, value] of Object.entries(map)) {
        if (!isSchema(value)) {
          stood[name] = value; // a list of names under dependencies, or a value the check refuses
          continue;
        }
        below.push([value, `${path}/${key}/${escape(name)}`]);
        stood[name] = true;
      }
      put(key, stood);
    }
    for (const key of SINGLES) {
      if (!isSchema(schema[key])) continue;
      below.push([schema[key], `${path}/${key}`]);
      put(key, true);
    }
    for (const key of LISTS) {
      const list = schema[key];
      if (key === 'items' && isSchema(list)) {
        below.push([list, `${path}/items`]);
        put(key, true);
      } else if (Array.isArray(list)) {
        put(
          key,
          list.map((value, i) => {
            if (!isSchema(value)) return value;
            below.push([value, `${path}/${key}/${i}`]);
            return true;
          }),
        );
      }
    }
    let ok = check(shallow ?? schema, path, problems);
    let fixed = Object.isFrozen(schema) && Object.values(schema).every((v) => typeof v !== 'object' || v === null || Object.isFrozen(v));
    for (const [value, at] of below) {
      const part = walk(value, at, problems);
      ok &&= part.ok;
      fixed &&= part.fixed;
    }
    if (ok && fixed) passed.add(schema);
    return { ok, fixed };
  }

  return (schema) => {
    const problems: string[] = [];
    if (!walk(schema, '', problems).ok) throw new Error(problems.join(', '));
  };
}

function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
