import { isRecord, type JsonSchema } from '../../common/json.js';

// OpenAI's strict mode (structured outputs) makes the model's arguments match the schema, but
// accepts only a subset of JSON Schema: every object closed (`additionalProperties: false`) with
// every property required, no `oneOf`/`allOf`/`not`/conditionals, a few string/number/array
// keywords. The conversion:
//
//   optional property    required, and nullable: `type: ["string", "null"]` (or a null branch in
//                        anyOf); executeToolCalls turns such a null back into "absent" before
//                        validation, so the tool's default still applies (see null-optionals.ts)
//   narrowing keyword    one strict mode lacks but that only narrows values (minLength,
//                        maxLength, uniqueItems, min/maxProperties, an unsupported format,
//                        `default`): moved into the description — the registry still enforces it
//                        when the call arrives, and answers a violation in words the model reads
//   oneOf                becomes anyOf (looser; the registry still checks the original)
//   annotations          ($comment, examples, readOnly…) dropped
//
// A schema is not converted — `strict` stays false and the schema goes out as written — when a
// strict version would refuse calls the tool accepts: a free-form object (no `properties`, or
// `additionalProperties` other than false), an untyped value, a property that is both optional
// and already nullable (null would become ambiguous), `allOf`/`not`/`if`/`patternProperties`/
// tuples, an anyOf at the root, a remote $ref, an unknown keyword, or more than 10 levels.

export interface StrictConversion {
  readonly schema: JsonSchema;
  /** True when `schema` is the strict-mode form and may be sent with `strict: true`. */
  readonly strict: boolean;
  /** Why it could not be converted. */
  readonly reason?: string;
}

class Unfaithful extends Error {}

const MAX_DEPTH = 10;
const STRING_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** Kept as they are. */
const KEPT = new Set([
  'type', 'description', 'title', 'enum', 'const',
  'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);
/** Handled by the walk. */
const WALKED = new Set(['properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', '$ref', '$defs', 'definitions', 'format']);
/** Narrow values; strict mode lacks them, so they move into the description. */
const NARROWING = new Set(['minLength', 'maxLength', 'uniqueItems', 'minProperties', 'maxProperties', 'default', 'contentMediaType', 'contentEncoding']);
/** Say nothing about which values are valid. */
const ANNOTATIONS = new Set(['$comment', '$schema', '$id', 'examples', 'readOnly', 'writeOnly', 'deprecated']);

/** A schema object (not `true` or `false`). */
const isSchema: (value: unknown) => value is JsonSchema = isRecord;

function withNotes(description: unknown, notes: readonly string[]): string | undefined {
  const text = typeof description === 'string' ? description : '';
  if (notes.length === 0) return text === '' ? undefined : text;
  const note = `(${notes.join('; ')})`;
  return text === '' ? note : `${text} ${note}`;
}

function fail(path: string, why: string): never {
  throw new Unfaithful(`${path === '' ? 'the schema' : path}: ${why}`);
}

/** `optional`: a property the object does not require, which is about to become nullable. */
function convert(node: unknown, path: string, depth: number, optional = false): JsonSchema {
  if (!isSchema(node)) fail(path, 'a boolean schema');
  if (depth > MAX_DEPTH) fail(path, `nested more than ${MAX_DEPTH} levels`);
  const out: Record<string, unknown> = {};
  // Tells the model what the added null means.
  const notes: string[] = optional ? ['optional: null leaves it out'] : [];
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (KEPT.has(key)) out[key] = value;
    else if (NARROWING.has(key)) notes.push(`${key}: ${JSON.stringify(value)}`);
    else if (!WALKED.has(key) && !ANNOTATIONS.has(key)) fail(path, `keyword '${key}' has no strict-mode equivalent`);
  }
  if (typeof node.format === 'string') {
    if (STRING_FORMATS.has(node.format)) out.format = node.format;
    else notes.push(`format: ${node.format}`);
  }
  if (node.$ref !== undefined) {
    if (typeof node.$ref !== 'string' || !/^#\/(\$defs|definitions)\//.test(node.$ref)) fail(path, 'only local $refs into $defs can be kept');
    out.$ref = node.$ref;
  }
  const branches = node.anyOf ?? node.oneOf;
  if (branches !== undefined) {
    if (depth === 0) fail(path, 'anyOf at the root');
    if (!Array.isArray(branches) || (node.anyOf !== undefined && node.oneOf !== undefined)) fail(path, 'anyOf and oneOf together');
    out.anyOf = branches.map((b, i) => convert(b, `${path}/anyOf/${i}`, depth + 1));
  }
  for (const defs of ['$defs', 'definitions'] as const) {
    const table = node[defs];
    if (table === undefined) continue;
    if (!isSchema(table)) fail(path, `${defs} is not an object`);
    const converted: Record<string, unknown> = {};
    for (const name of Object.keys(table)) converted[name] = convert(table[name], `${path}/${defs}/${name}`, depth + 1);
    out[defs] = converted;
  }
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  if (types.length === 0 && node.enum === undefined && node.const === undefined && branches === undefined && node.$ref === undefined) {
    fail(path, 'a value without a type');
  }
  if (types.includes('object')) convertObject(node, out, path, depth);
  if (types.includes('array')) {
    if (!isSchema(node.items)) fail(path, 'an array without a single items schema');
    out.items = convert(node.items, `${path}/items`, depth + 1);
  }
  const description = withNotes(out.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

function convertObject(node: JsonSchema, out: Record<string, unknown>, path: string, depth: number): void {
  if (!isSchema(node.properties)) fail(path, 'an object without properties accepts any keys');
  if (node.additionalProperties !== undefined && node.additionalProperties !== false) fail(path, 'an object open to additional properties');
  const required = new Set(Array.isArray(node.required) ? (node.required as unknown[]) : []);
  const properties: Record<string, unknown> = {};
  for (const name of Object.keys(node.properties)) {
    const where = `${path}/properties/${name}`;
    properties[name] = required.has(name) ? convert(node.properties[name], where, depth + 1) : nullable(convert(node.properties[name], where, depth + 1, true), where);
  }
  out.properties = properties;
  out.required = Object.keys(properties);
  out.additionalProperties = false;
}

/** The schema plus null; fails when null is already allowed (an explicit null would then mean two things). */
function nullable(schema: JsonSchema, path: string): JsonSchema {
  if (allowsNull(schema)) fail(path, 'an optional property that also accepts null');
  if (schema.$ref !== undefined || schema.const !== undefined || (schema.type === undefined && schema.anyOf === undefined)) {
    if (schema.enum !== undefined && schema.$ref === undefined && schema.const === undefined) return { ...schema, enum: [...(schema.enum as unknown[]), null] };
    return { anyOf: [schema, { type: 'null' }] };
  }
  if (schema.anyOf !== undefined) return { ...schema, anyOf: [...(schema.anyOf as unknown[]), { type: 'null' }] };
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const out: Record<string, unknown> = { ...schema, type: [...types, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...(schema.enum as unknown[]), null];
  return out;
}

/** Whether a schema admits null by its own keywords ($refs are not followed). */
export function allowsNull(schema: unknown): boolean {
  if (!isSchema(schema)) return schema === true;
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  if (Object.hasOwn(schema, 'const') && schema.const === null) return true;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.some(allowsNull)) return true;
  return false;
}

export function toStrictSchema(schema: JsonSchema): StrictConversion {
  try {
    if (schema.type !== 'object') fail('', 'the root must be an object schema');
    // A copy: the registry's schemas are frozen, and callers may edit what they are given.
    return { schema: convert(structuredClone(schema), '', 0), strict: true };
  } catch (error) {
    if (error instanceof Unfaithful) return { schema, strict: false, reason: error.message };
    throw error;
  }
}
