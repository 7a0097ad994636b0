// Ajv's `useDefaults` and `coerceTypes` write into the data they validate, and the caller's
// arguments must stay untouched; and the copy is what the handler gets, so a handler that changes
// its arguments in place changes nothing another step (or the run's input) holds: every object
// and array in it is its own. structuredClone costs microseconds; most tools take a flat object of
// scalars, where a shallow copy does both jobs. When the schema lets only scalars through (typed
// properties, no others) that is all; otherwise the flat case copies members deeply when one is an
// object or array (an extra property, an untyped one). The choice is made once per schema when
// the tool is built.

import { defineOwn } from '../common/define-own.js';
import type { JsonSchema } from '../common/json.js';

export type CopyArgs = (args: Record<string, unknown>) => Record<string, unknown>;

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** Keywords under which Ajv might reach (and so mutate) values nested below a property. */
const NESTING_KEYWORDS = [
  'properties', 'patternProperties', 'additionalProperties', 'items', 'additionalItems', 'prefixItems',
  'contains', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$ref', 'dependencies',
  'dependentSchemas', 'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'definitions', '$defs',
];
/** Top-level keywords a flat schema may use without Ajv walking into a member's value. */
const FLAT_TOP_LEVEL = new Set([
  '$schema', '$id', 'title', 'description', 'type', 'properties', 'required', 'additionalProperties',
  'minProperties', 'maxProperties', 'examples', '$comment', 'default',
]);

function isScalarSchema(schema: unknown): boolean {
  if (typeof schema === 'boolean') return true;
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  if (NESTING_KEYWORDS.some((k) => k in s)) return false;
  const type = s.type;
  if (type === undefined) return 'enum' in s || 'const' in s;
  const types = Array.isArray(type) ? type : [type];
  return types.every((t) => typeof t === 'string' && SCALAR_TYPES.has(t));
}

/** True when a shallow copy is all the protection the caller's object needs. */
function isFlatSchema(schema: JsonSchema): boolean {
  if (Object.keys(schema).some((k) => !FLAT_TOP_LEVEL.has(k))) return false;
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) return false;
  const properties = schema.properties ?? {};
  if (typeof properties !== 'object' || properties === null) return false;
  return Object.values(properties).every(isScalarSchema);
}

function isScalarOnly(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || !isScalarSchema(schema)) return false;
  const s = schema as Record<string, unknown>;
  const scalar = (v: unknown): boolean => typeof v !== 'object' || v === null;
  if (s.type !== undefined) return true;
  return Array.isArray(s.enum) ? s.enum.every(scalar) : 'const' in s && scalar(s.const);
}

/** Validated arguments can only hold scalars: typed properties, and no others. */
function admitsOnlyScalars(schema: JsonSchema): boolean {
  return schema.additionalProperties === false && Object.values(schema.properties ?? {}).every(isScalarOnly);
}

/** Deep-copies, in place, the members of a fresh shallow copy that are objects or arrays. */
function ownMembers(copy: Record<string, unknown>): Record<string, unknown> {
  for (const key in copy) {
    const value = copy[key];
    if (typeof value === 'object' && value !== null) copy[key] = cloneJson(value);
  }
  return copy;
}

function shallowCopy(args: Record<string, unknown>): Record<string, unknown> {
  return { ...args };
}

function shallowCopyOwningMembers(args: Record<string, unknown>): Record<string, unknown> {
  return ownMembers({ ...args });
}

// V8 gives a spread copy a map that adding properties later is very slow on (the
// registry-validation bench, filling defaults), and filling defaults adds properties. Object.assign
// onto a fresh literal has no such cliff; spread stays the fastest when nothing is added.
function shallowCopyForDefaults(args: Record<string, unknown>): Record<string, unknown> {
  return Object.assign({}, args);
}

function shallowCopyForDefaultsOwningMembers(args: Record<string, unknown>): Record<string, unknown> {
  return ownMembers(Object.assign({}, args));
}

function hasDefaults(schema: JsonSchema): boolean {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return false;
  return Object.values(properties).some((p) => typeof p === 'object' && p !== null && 'default' in p);
}

/** A copy of JSON-like data (plain objects and arrays), with own `__proto__` keys kept as data. */
function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    // A loop with scalars copied in place: `map(cloneJson)` made a call per element, and arrays
    // of numbers or strings (a join's inputs, a for_each's items) are the common case.
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      out[i] = typeof item === 'object' && item !== null ? cloneJson(item) : item;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member: unknown = (value as Record<string, unknown>)[key];
    const item = typeof member === 'object' && member !== null ? cloneJson(member) : member;
    defineOwn(out, key, item);
  }
  return out;
}

/**
 * The copy for arguments made for the call that nobody else holds (a resolved input_map): the
 * object itself, with its members that are objects or arrays copied (they may be a step's output
 * in the run context), or nothing more when the schema admits only scalars. A shallow copy of such
 * an object was an allocation per step for nobody.
 */
export function planFreshCopy(schema: JsonSchema): CopyArgs {
  return isFlatSchema(schema) && admitsOnlyScalars(schema) ? (args) => args : ownMembers;
}

export function planCopy(schema: JsonSchema): CopyArgs {
  if (!isFlatSchema(schema)) return (args) => cloneJson(args) as Record<string, unknown>;
  // A handler only ever sees arguments that validated: with only scalars admitted, the copy
  // cannot hold an object anyone else has (anything else fails validation first).
  if (admitsOnlyScalars(schema)) return hasDefaults(schema) ? shallowCopyForDefaults : shallowCopy;
  return hasDefaults(schema) ? shallowCopyForDefaultsOwningMembers : shallowCopyOwningMembers;
}
