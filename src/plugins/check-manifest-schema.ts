import type { ErrorObject } from 'ajv';
import { DiagnosticSink } from '../loader/diagnostic-sink.js';
import { describeKind, didYouMean, suggestionSuffix, type Diagnostic, type ErrorCode } from '../common/errors.js';
import { DURATION_RULE } from '../expr/duration.js';
import type { SourceMap } from '../loader/index.js';
import { pointerTokens } from '../common/json-pointer.js';
import { unknownKey } from '../schemas/unknown-key.js';
import { validatePluginManifest } from '../schemas/validators.js';

// schemas/plugin.schema.json is the source of truth for a manifest's shape (editors complete
// from it; src/plugins/manifest.generated.ts is derived from it). Its errors become diagnostics
// at the offending key or value: unknown keys with did-you-mean, a version that is not semver
// as BAD_SEMVER, one line for a bad duration instead of ajv's oneOf cascade.


function label(pointer: string): string {
  return pointer === '' ? 'the manifest' : `'${pointerTokens(pointer).join('.')}'`;
}

interface Problem {
  readonly code: ErrorCode;
  readonly pointer: string;
  readonly message: string;
  readonly atKey?: boolean;
  readonly suggestion?: string;
  /** Report only the first problem at this pointer. */
  readonly once?: boolean;
}

function describe(e: ErrorObject): Problem | undefined {
  const at = e.instancePath;
  const where = label(at);
  if (at === '/version') {
    return { code: 'BAD_SEMVER', pointer: at, message: `version ${JSON.stringify(e.data)} is not a semantic version like 1.2.0 (quote it in YAML: "1.2")` };
  }
  // A tool's `parameters` or `returns` that breaks the JSON Schema meta-schema: one line at the
  // key (the meta-schema's anyOf cascade says the same thing several ways).
  const schemaKey = /^(\/tools\/\d+\/(?:parameters|returns))(\/.*)?$/.exec(at);
  if (schemaKey && !e.schemaPath.startsWith('#/definitions/tool/')) {
    const inner = schemaKey[2] ? `'${pointerTokens(schemaKey[2]).join('.')}' ` : '';
    return { code: 'PLUGIN_INVALID', pointer: schemaKey[1]!, message: `${label(schemaKey[1]!)} is not a valid JSON Schema: ${inner}${metaProblem(e)}`, once: true };
  }
  if (/^\/requires\/\d+$/.test(at) && e.keyword === 'pattern') {
    return { code: 'BAD_SEMVER', pointer: at, message: `requirement ${JSON.stringify(e.data)} must be a plugin or capability name, optionally followed by a semver range (text >= 1.0.0, ^1.2 or 1.x)` };
  }
  if (e.schemaPath.includes('/definitions/duration')) {
    if (e.keyword !== 'oneOf') return undefined;
    return { code: 'BAD_DURATION', pointer: at, message: `${where} is not a duration (${JSON.stringify(e.data)}): give ${DURATION_RULE}` };
  }
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return { code: 'UNKNOWN_KEY', ...unknownKey(e, where), atKey: true };
    case 'required':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} is missing the required key '${String(params.missingProperty)}'` };
    case 'type':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} must be ${typeName(String(params.type))}, not ${describeKind(e.data)}` };
    case 'pattern':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} ${JSON.stringify(e.data)} is not valid: ${String((e.parentSchema as { description?: string })?.description ?? `must match ${String(params.pattern)}`)}` };
    default:
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} ${e.message ?? 'is invalid'}` };
  }
}

const JSON_SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** How the meta-schema's complaint reads to a person: a misspelt `type` gets its closest name. */
function metaProblem(e: ErrorObject): string {
  if (e.keyword === 'enum' && /\/type(\/\d+)?$/.test(e.instancePath) && typeof e.data === 'string') {
    return `is '${e.data}', which is not a JSON Schema type${suggestionSuffix(didYouMean(e.data, JSON_SCHEMA_TYPES))}; the types are ${JSON_SCHEMA_TYPES.join(', ')}`;
  }
  if (e.keyword === 'type') return `must be ${typeName(String((e.params as { type: unknown }).type))}, not ${describeKind(e.data)}`;
  return e.message ?? 'is invalid';
}

function typeName(type: string): string {
  if (type === 'array') return 'a list';
  if (type === 'object') return 'a mapping';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Every schema problem of a manifest value, placed in its file. Empty when it passes. */
export function checkManifestSchema(value: unknown, file: string, sourceMap: SourceMap): Diagnostic[] {
  if (validatePluginManifest(value)) return [];
  const sink = new DiagnosticSink(file, sourceMap);
  const reported = new Set<string>();
  for (const error of validatePluginManifest.errors ?? []) {
    const p = describe(error);
    if (p?.once) {
      if (reported.has(p.pointer)) continue;
      reported.add(p.pointer);
    }
    if (p) sink.error(p.code, p.pointer, p.message, { ...(p.atKey ? { atKey: true } : {}), ...(p.suggestion ? { suggestion: p.suggestion } : {}) });
  }
  return sink.diagnostics;
}
