import { canonicalJson } from '../../registry/canonical-json.js';
import { patternProblem } from '../../common/linear-regexp.js';
import type { Refs } from './openapi-refs.js';

// An OpenAPI schema → the JSON Schema (draft-07) the engine validates with. `$ref`s are followed
// as they are met (openapi-refs.ts): a schema met again inside itself (a recursive type) becomes
// an open schema with a note, so every tool's schema is a finite tree. OpenAPI's own words become
// JSON Schema ones (`nullable: true` a null type, Swagger's `type: file` a string, a boolean
// `exclusiveMinimum` the numeric form, `prefixItems` a tuple) and keywords draft-07 does not know
// (discriminator, xml, example, x-…) are left out, so that the validator has nothing to warn
// about.
//
// A document's operations share most of their types (GitHub's thousand operations return a few
// hundred schemas, each many times over), so one converter serves a whole document and converts
// each schema once: the result is kept and the same object handed out wherever that schema is met
// again, unless what it became depended on where it was met — cut short by the depth limit, or
// by a recursion through a schema above it. The results are frozen: they are shared between tools.

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

export interface SchemaConverter {
  /** The JSON Schema for an OpenAPI schema (or a `$ref` to one); throws RefError for a reference that does not resolve. */
  convert(schema: unknown): Schema;
}

/** What converting one schema made, and how far the result depends on where it was met. */
interface Made {
  readonly schema: Schema;
  /** Levels of schemas below this one in the result. */
  readonly height: number;
  /** Somewhere below, the depth limit left a schema open. */
  readonly truncated: boolean;
  /** The shallowest enclosing schema a recursion inside was cut at (its stack index), or Infinity. */
  readonly cut: number;
}

interface Kept extends Made {
  readonly depth: number;
}

const OPEN: Schema = Object.freeze({});
const NOTHING: Schema = Object.freeze({ not: OPEN });
const LEAF: Made = { schema: OPEN, height: 0, truncated: false, cut: Infinity };
const CUT_SHORT: Made = { schema: OPEN, height: 0, truncated: true, cut: Infinity };

/** A schema and the lists and maps it holds made unchangeable: it is handed to every tool that meets it. */
function freeze(schema: Schema): Schema {
  for (const value of Object.values(schema)) if (typeof value === 'object' && value !== null) Object.freeze(value);
  return Object.freeze(schema);
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createSchemaConverter(refs: Refs): SchemaConverter {
  const kept = new Map<object, Kept>();
  const stack: object[] = [];

  function make(schema: unknown, depth: number): Made {
    if (schema === true || schema === undefined) return LEAF;
    if (schema === false) return { ...LEAF, schema: NOTHING };
    const node = refs.resolve(schema);
    if (node === true) return LEAF;
    if (node === false) return { ...LEAF, schema: NOTHING };
    if (!isObject(node)) return LEAF;
    const at = stack.indexOf(node);
    if (at >= 0) {
      const note = `${typeof node.title === 'string' ? `${node.title}: ` : ''}recursive (the same shape as an enclosing value)`;
      return { schema: Object.freeze({ description: note }), height: 0, truncated: false, cut: at };
    }
    if (depth > MAX_DEPTH) return CUT_SHORT;
    const known = kept.get(node);
    if (known && (known.truncated ? known.depth === depth : depth + known.height <= MAX_DEPTH)) return known;
    const index = stack.length;
    stack.push(node);
    let height = 0;
    let truncated = false;
    let cut = Infinity;
    const below = (value: unknown): Schema => {
      const made = make(value, depth + 1);
      height = Math.max(height, made.height + 1);
      truncated ||= made.truncated;
      cut = Math.min(cut, made.cut);
      return made.schema;
    };
    try {
      const out: Schema = {};
      for (const [key, value] of Object.entries(node)) {
        if (KEPT.has(key)) out[key] = value;
        else if (SCHEMA_MAPS.has(key) && isObject(value)) {
          out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v : below(v)]));
        } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
          if (value.length > 0) out[key] = value.map(below);
        } else if (SINGLE.has(key)) {
          out[key] = Array.isArray(value) ? value.map(below) : typeof value === 'boolean' ? value : below(value);
        } else if (key === 'required' && Array.isArray(value)) {
          if (value.length > 0) out.required = [...new Set(value.filter((v) => typeof v === 'string'))];
        } else if (key === 'prefixItems' && Array.isArray(value)) {
          out.items = value.map(below);
        } else if (key === 'examples' && Array.isArray(value)) {
          out.examples = value;
        }
      }
      const result = tidy(out, node);
      if (result !== out) for (const part of result.anyOf as Schema[]) freeze(part); // `out` or null
      const made: Kept = { schema: freeze(result), height, truncated, cut: cut >= index ? Infinity : cut, depth };
      // Kept only when it does not lean on a schema above it; a result cut short replaces none that is whole.
      if (cut >= index && !(truncated && known && !known.truncated)) kept.set(node, made);
      return made;
    } finally {
      stack.pop();
    }
  }

  return {
    convert: (schema) => make(schema, 0).schema,
  };
}

function tidy(out: Schema, source: Schema): Schema {
  if (out.type === 'file') out.type = 'string';
  // A document that lists an enum value twice means it once (JSON Schema forbids the repetition).
  if (Array.isArray(out.enum)) out.enum = uniqueValues(out.enum);
  if (Array.isArray(out.type)) out.type = out.type.map((t) => (t === 'file' ? 'string' : t));
  if (typeof out.pattern === 'string' && !isJsRegExp(out.pattern)) {
    // Written for another regular-expression engine (`(?i)`, `\Z`…): a note for people, not a check.
    out.description = typeof out.description === 'string' ? `${out.description} (pattern: ${out.pattern})` : `pattern: ${out.pattern}`;
    delete out.pattern;
  }
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

function uniqueValues(values: readonly unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = canonicalJson(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Whether the validator can use `pattern`: a Unicode regular expression with a linear-time match (common/linear-regexp.ts). */
function isJsRegExp(pattern: string): boolean {
  return patternProblem(pattern) === undefined;
}
