import { isRecord } from '../../common/json.js';
import type { KnownTools } from './known-tools.js';
import { parseLenientJson } from './lenient-json.js';
import { readPythonLiteral } from './python-literal.js';

// XML-style formats (Qwen3-Coder, GLM, MiniMax, Claude-style invoke) write every argument as text:
// `<parameter=days>3</parameter>`. Which type was meant is in the tool's parameter schema, so when
// the tools are known the text is read as that type, as vLLM's parsers do: integer and number
// parameters as numbers, booleans as true/false, null where the schema allows it, objects and
// arrays as JSON (or JSON escaped once more, or a Python literal: models trained on Python write
// `{'a': 1}` and `True`).
// Text that does not read as the schema's type stays text, so the tool's own validation names
// the parameter and the type it expected. Without a schema a value stays the text the model wrote.

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'object' | 'array';

const KINDS = new Set<string>(['string', 'integer', 'number', 'boolean', 'null', 'object', 'array']);

/**
 * Type names that tool definitions carry instead of JSON Schema's, written by hand or converted
 * from other languages (`float`, `int`, `bool`, `dict`…): the JSON type each stands for, as
 * vLLM's and SGLang's XML parsers read them. Case and spaces do not matter.
 */
const ALIASES: readonly (readonly [RegExp, Kind])[] = [
  [/^(?:str|text|varchar|char|enum)$/, 'string'],
  [/^(?:u?int(?:eger)?\d*|long|short|unsigned(?: \w+)?)$/, 'integer'],
  [/^(?:num|float\d*|double|decimal|real)$/, 'number'],
  [/^(?:bool)$/, 'boolean'],
  [/^(?:dict|dictionary|map|obj)$/, 'object'],
  [/^(?:arr|list|tuple)$/, 'array'],
  [/^(?:none|nil)$/, 'null'],
];

/** The JSON type a schema's type name stands for, or undefined for a name that means none. */
function kindOf(name: string): Kind | undefined {
  if (KINDS.has(name)) return name as Kind;
  const t = name.trim().toLowerCase();
  if (KINDS.has(t)) return t as Kind;
  for (const [re, kind] of ALIASES) if (re.test(t)) return kind;
  return undefined;
}
const INTEGER = /^[-+]?\d+$/;
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** The JSON types a schema admits (from `type`, `anyOf`/`oneOf` branches, `enum`/`const` values); empty when it says nothing. */
function kindsOf(schema: unknown, out: Set<Kind> = new Set(), depth = 0): Set<Kind> {
  if (!isRecord(schema) || depth > 4) return out;
  const type = schema.type;
  for (const t of Array.isArray(type) ? type : [type]) {
    const kind = typeof t === 'string' ? kindOf(t) : undefined;
    if (kind !== undefined) out.add(kind);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) kindsOf(b, out, depth + 1);
  }
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : [];
  for (const v of values) out.add(v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as Kind));
  if (out.size === 0 && isRecord(schema.properties)) out.add('object');
  return out;
}

function structured(text: string, kind: 'object' | 'array'): { value: unknown } | undefined {
  const json = parseLenientJson(text);
  const fits = (v: unknown): boolean => (kind === 'array' ? Array.isArray(v) : isRecord(v));
  if (json.ok && fits(json.value)) return { value: json.value };
  // JSON escaped once more, as inside a JSON string (`[{\"id\": \"1\"}]`, seen from GLM-4.6).
  const unescaped = text.includes('\\"') ? unescapeOnce(text) : undefined;
  if (unescaped !== undefined) {
    const again = parseLenientJson(unescaped);
    if (again.ok && fits(again.value)) return { value: again.value };
  }
  const literal = readPythonLiteral(text);
  return literal !== undefined && fits(literal.value) ? literal : undefined;
}

/** `text` read as the inside of a JSON string (its escapes undone), or undefined when it is not one. */
function unescapeOnce(text: string): string | undefined {
  try {
    const value: unknown = JSON.parse(`"${text.replace(/\r?\n/g, '\\n')}"`);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `text` read as a value of `schema`'s type; the text itself when the schema is silent or the text does not fit. */
export function typeValue(schema: unknown, text: string): unknown {
  const kinds = kindsOf(schema);
  if (kinds.size === 0) return text;
  const t = text.trim();
  if (kinds.has('null') && (t === 'null' || t === 'None')) return null;
  if (kinds.has('boolean') && /^(?:true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  if (kinds.has('integer') && INTEGER.test(t)) return Number(t);
  if (kinds.has('number') && NUMBER.test(t)) return Number(t);
  for (const kind of ['object', 'array'] as const) {
    if (!kinds.has(kind)) continue;
    const value = structured(t, kind);
    if (value !== undefined) return value.value;
  }
  return text;
}

/** The typing function formats receive as `context.value`. */
export function valueTyper(tools: KnownTools | undefined): (tool: string, parameter: string, text: string) => unknown {
  if (tools === undefined) return (_tool, _parameter, text) => text;
  return (tool, parameter, text) => {
    const properties = tools.parameters(tool)?.properties;
    const schema = isRecord(properties) && Object.hasOwn(properties, parameter) ? properties[parameter] : undefined;
    return schema === undefined ? text : typeValue(schema, text);
  };
}
