// An OpenAPI schema → the JSON Schema (draft-07) the engine validates with. The document's $refs
// are resolved already (object identity stands for a reference, and a recursive type is an object
// cycle): a schema met again inside itself becomes an open schema with a note, so every tool's
// schema is a finite tree. OpenAPI's own words become JSON Schema ones (`nullable: true` a null
// type, Swagger's `type: file` a string, a boolean `exclusiveMinimum` the numeric form,
// `prefixItems` a tuple) and keywords draft-07 does not know (discriminator, xml, example,
// x-…) are left out, so that the validator has nothing to warn about.

type Schema = Record<string, unknown>;

const KEPT = new Set([
  'type', 'enum', 'const', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'description', 'title', 'default', 'readOnly', 'writeOnly',
  'contentMediaType', 'contentEncoding',
]);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependencies']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const SINGLE = new Set(['additionalProperties', 'not', 'propertyNames', 'contains', 'if', 'then', 'else', 'items']);
/** What the engine's validator (with ajv-formats) knows; other formats are notes for people. */
const FORMATS = new Set([
  'date', 'time', 'date-time', 'duration', 'uri', 'uri-reference', 'uri-template', 'url', 'email', 'hostname', 'ipv4', 'ipv6', 'regex',
  'uuid', 'json-pointer', 'relative-json-pointer', 'byte', 'int32', 'int64', 'float', 'double', 'password', 'binary',
]);
/** Deeper than this, a schema is left open: tool schemas are for calling, not for documenting every level. */
const MAX_DEPTH = 24;

export function toJsonSchema(schema: unknown): Schema {
  return convert(schema, [], 0);
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function convert(schema: unknown, stack: object[], depth: number): Schema {
  if (schema === true || schema === undefined) return {};
  if (schema === false) return { not: {} };
  if (!isObject(schema)) return {};
  if (stack.includes(schema)) return { description: `${typeof schema.title === 'string' ? `${schema.title}: ` : ''}recursive (the same shape as an enclosing value)` };
  if (depth > MAX_DEPTH) return {};
  stack.push(schema);
  try {
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (KEPT.has(key)) out[key] = value;
      else if (SCHEMA_MAPS.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v : convert(v, stack, depth + 1)]));
      } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
        if (value.length > 0) out[key] = value.map((v) => convert(v, stack, depth + 1));
      } else if (SINGLE.has(key)) {
        out[key] = Array.isArray(value) ? value.map((v) => convert(v, stack, depth + 1)) : typeof value === 'boolean' ? value : convert(value, stack, depth + 1);
      } else if (key === 'required' && Array.isArray(value)) {
        if (value.length > 0) out.required = [...new Set(value.filter((v) => typeof v === 'string'))];
      } else if (key === 'prefixItems' && Array.isArray(value)) {
        out.items = value.map((v) => convert(v, stack, depth + 1));
      } else if (key === 'examples' && Array.isArray(value)) {
        out.examples = value;
      }
    }
    return tidy(out, schema);
  } finally {
    stack.pop();
  }
}

function tidy(out: Schema, source: Schema): Schema {
  if (out.type === 'file') out.type = 'string';
  if (Array.isArray(out.type)) out.type = out.type.map((t) => (t === 'file' ? 'string' : t));
  if (typeof out.format === 'string' && !FORMATS.has(out.format)) {
    out.description = typeof out.description === 'string' ? `${out.description} (format: ${out.format})` : `format: ${out.format}`;
    delete out.format;
  }
  if (source.exclusiveMinimum === true && typeof source.minimum === 'number') {
    out.exclusiveMinimum = source.minimum;
    delete out.minimum;
  } else if (typeof source.exclusiveMinimum === 'number') out.exclusiveMinimum = source.exclusiveMinimum;
  if (source.exclusiveMaximum === true && typeof source.maximum === 'number') {
    out.exclusiveMaximum = source.maximum;
    delete out.maximum;
  } else if (typeof source.exclusiveMaximum === 'number') out.exclusiveMaximum = source.exclusiveMaximum;
  if (source.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type)) out.type = [...new Set([...(out.type as unknown[]), 'null'])];
    else if (out.type === undefined && Object.keys(out).some((k) => k !== 'description' && k !== 'title')) return { anyOf: [out, { type: 'null' }] };
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}
