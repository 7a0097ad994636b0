import { isRecord, type JsonSchema } from '../../common/json.js';

// Just enough JSON Schema to follow data from one step to the next: the JSON types a
// schema allows, what a member or an element of it is, and whether a value of one schema fits a
// parameter of another. Anything this cannot read (`$ref`, `not`, `if`) is "any": the check then
// says nothing rather than something wrong.

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

export const ANY: JsonSchema = Object.freeze({});

export function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'boolean' : 'string';
}

/** The types a schema allows; undefined = any. */
export function typesOf(schema: JsonSchema | undefined): ReadonlySet<JsonType> | undefined {
  if (!schema) return undefined;
  const branches = unionBranches(schema);
  if (branches) {
    const out = new Set<JsonType>();
    for (const b of branches) {
      const t = typesOf(b);
      if (!t) return undefined;
      for (const x of t) out.add(x);
    }
    return out;
  }
  if ('const' in schema) return new Set([typeOfValue(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(typeOfValue));
  const t = schema.type;
  if (typeof t === 'string') return new Set([t as JsonType]);
  if (Array.isArray(t)) return new Set(t as JsonType[]);
  return undefined;
}

function unionBranches(schema: JsonSchema): JsonSchema[] | undefined {
  const list = schema.anyOf ?? schema.oneOf;
  return Array.isArray(list) && list.every(isRecord) && schema.type === undefined ? (list as JsonSchema[]) : undefined;
}

export function describeTypes(types: ReadonlySet<JsonType> | undefined): string {
  if (!types) return 'anything';
  const list = [...types].filter((t) => !(t === 'integer' && types.has('number')));
  return list.length === 1 ? list[0]! : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

export type Member =
  /** The member exists (or may: the schema does not close its properties). */
  | { readonly kind: 'found'; readonly schema: JsonSchema }
  /** The schema lists its properties and this is not one of them. */
  | { readonly kind: 'missing'; readonly known: readonly string[] }
  /** The value cannot have members at all. */
  | { readonly kind: 'not-object'; readonly types: ReadonlySet<JsonType> };

/** What `value[name]` is for a value of `schema`. */
export function memberOf(schema: JsonSchema, name: string): Member {
  const branches = unionBranches(schema);
  if (branches) {
    const found = branches.map((b) => memberOf(b, name)).filter((m): m is Extract<Member, { kind: 'found' }> => m.kind === 'found');
    if (found.length) return { kind: 'found', schema: found.length === 1 ? found[0]!.schema : { anyOf: found.map((f) => f.schema) } };
    return { kind: 'missing', known: branches.flatMap((b) => Object.keys(isRecord(b.properties) ? b.properties : {})) };
  }
  const types = typesOf(schema);
  if (types && !types.has('object')) return { kind: 'not-object', types };
  const props = isRecord(schema.properties) ? schema.properties : undefined;
  const own = props && Object.hasOwn(props, name) ? props[name] : undefined;
  if (isRecord(own)) return { kind: 'found', schema: own };
  if (schema.patternProperties !== undefined) return { kind: 'found', schema: ANY };
  const extra = schema.additionalProperties;
  if (isRecord(extra)) return { kind: 'found', schema: extra };
  // Properties listed and extra ones not invited: a name outside the list is a mistake.
  if (props && extra !== true) return { kind: 'missing', known: Object.keys(props) };
  return { kind: 'found', schema: ANY };
}

/** What an element of an array of `schema` is; undefined when the value cannot be an array. */
export function elementOf(schema: JsonSchema, index?: number): JsonSchema | undefined {
  const branches = unionBranches(schema);
  if (branches) {
    const found = branches.map((b) => elementOf(b, index)).filter((s): s is JsonSchema => s !== undefined);
    return found.length === 0 ? undefined : found.length === 1 ? found[0] : { anyOf: found };
  }
  const types = typesOf(schema);
  if (types && !types.has('array')) return undefined;
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
  if (index !== undefined && index >= 0 && isRecord(prefix?.[index])) return prefix[index] as JsonSchema;
  return isRecord(schema.items) ? schema.items : ANY;
}

export type Fit =
  | { readonly kind: 'ok' }
  /** Ajv coerces the value (numbers and booleans to text, numeric text to numbers, null to empty), or only some of the producer's types fit. */
  | { readonly kind: 'coerced'; readonly from: ReadonlySet<JsonType>; readonly to: ReadonlySet<JsonType> }
  | { readonly kind: 'mismatch'; readonly from: ReadonlySet<JsonType>; readonly to: ReadonlySet<JsonType> };

const SCALAR: ReadonlySet<JsonType> = new Set<JsonType>(['string', 'number', 'integer', 'boolean', 'null']);

/** Does a value of type `from` fit a parameter of type `to`, as the registry validates (coerceTypes)? */
export function fits(from: ReadonlySet<JsonType> | undefined, to: ReadonlySet<JsonType> | undefined): Fit {
  if (!from || !to) return { kind: 'ok' };
  let fitting = 0;
  let coercible = 0;
  for (const t of from) {
    if (to.has(t) || (t === 'integer' && to.has('number'))) fitting++;
    else if (SCALAR.has(t) && [...to].some((x) => SCALAR.has(x))) coercible++;
  }
  if (fitting === from.size) return { kind: 'ok' };
  if (fitting + coercible === from.size || fitting > 0) return { kind: 'coerced', from, to };
  return { kind: 'mismatch', from, to };
}

/** A string parameter whose pattern starts with `^$`: it takes a JSONPath as text (json_query's `path`). */
export function expectsJsonPath(param: JsonSchema): boolean {
  return typeof param.pattern === 'string' && /^\^\\?\$/.test(param.pattern) && typesOf(param)?.has('string') === true;
}
