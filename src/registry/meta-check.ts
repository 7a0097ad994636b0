import type { ErrorObject } from 'ajv';
import { validateJsonSchemaNode } from '../schemas/validators.js';
import { patternProblem } from '../common/linear-regexp.js';

// A schema checked against the draft-07 meta-schema one schema object at a time, so that a part
// many schemas share is checked once. The meta-schema checks every subschema (under properties,
// items, allOf, …) against itself and nothing across levels, so checking each object against the
// meta-schema with its subschema positions accepting any object or boolean (generated beside it,
// scripts/gen-validators.js), and then its subschemas the same way, finds exactly what checking
// the whole tree at once would. An object that passed is remembered when it cannot change any
// more — it is frozen, so are the lists and maps it holds, and so is everything below it — and
// is not checked again: tools generated from one document (an OpenAPI document's operations)
// share most of their types, and without this every tool would check the whole of every type it
// reaches. The memory belongs to one schema compiler, never to the process.

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

const MAX_VERDICTS = 1000;

export function createMetaCheck(): MetaCheck {
  const validateNode = validateJsonSchemaNode;
  const passed = new WeakSet<object>();
  // Patterns seen, with their verdict: a reload checks the same patterns again (bounded, per compiler).
  const verdicts = new Map<string, string | undefined>();
  const problemOf = (pattern: string): string | undefined => {
    if (verdicts.has(pattern)) return verdicts.get(pattern);
    const verdict = patternProblem(pattern);
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(pattern, verdict);
    return verdict;
  };

  /** Checks `schema` (at `path` in the whole) and what is below it; true when all of it passed and none of it can change. */
  function walk(schema: unknown, path: string, problems: string[]): { ok: boolean; fixed: boolean } {
    if (isObj(schema) && passed.has(schema)) return { ok: true, fixed: true };
    let ok = validateNode(schema);
    if (!ok) problems.push(...(validateNode.errors ?? []).map((e: ErrorObject) => `schema${path}${e.instancePath} ${e.message ?? 'is invalid'}`));
    if (!isObj(schema)) return { ok, fixed: true };
    // What the meta-schema cannot see: a pattern the linear-time engine refuses.
    const patterns = [
      ...(typeof schema.pattern === 'string' ? [{ at: `${path}/pattern`, pattern: schema.pattern }] : []),
      ...(isObj(schema.patternProperties) ? Object.keys(schema.patternProperties).map((name) => ({ at: `${path}/patternProperties/${escape(name)}`, pattern: name })) : []),
    ];
    for (const { at, pattern } of patterns) {
      const reason = problemOf(pattern);
      if (reason === undefined) continue;
      ok = false;
      problems.push(`schema${at} ${JSON.stringify(pattern)} cannot be matched in linear time: ${reason}`);
    }
    let fixed = Object.isFrozen(schema);
    const below = (value: unknown, at: string): void => {
      if (!isSchema(value)) return; // not a schema: the check above has said so
      const part = walk(value, at, problems);
      ok &&= part.ok;
      fixed &&= part.fixed;
    };
    for (const key of Object.keys(schema)) {
      const value = schema[key];
      if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) fixed = false;
      if (MAPS.includes(key)) {
        if (isObj(value)) for (const name of Object.keys(value)) below(value[name], `${path}/${key}/${escape(name)}`);
      } else if (SINGLES.includes(key)) below(value, `${path}/${key}`);
      else if (LISTS.includes(key)) {
        if (Array.isArray(value)) value.forEach((v, i) => below(v, `${path}/${key}/${i}`));
        else if (key === 'items') below(value, `${path}/items`);
      }
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
