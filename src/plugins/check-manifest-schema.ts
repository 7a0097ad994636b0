import type { ErrorObject } from 'ajv';
import { didYouMean, suggestionSuffix, type Diagnostic, type DiagnosticCode } from '../errors.js';
import type { SourceMap } from '../loader/index.js';
import { validatePluginManifest } from '../schema-validators.js';

// schemas/plugin.schema.json is the source of truth for a manifest's shape (editors complete
// from it; src/plugins/manifest.generated.ts is derived from it). Its errors become diagnostics
// at the offending key or value: unknown keys with did-you-mean, a version that is not semver
// as BAD_SEMVER, one line for a bad duration instead of ajv's oneOf cascade.


function segment(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function label(pointer: string): string {
  if (pointer === '') return 'the manifest';
  return `'${pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')}'`;
}

interface Problem {
  readonly code: DiagnosticCode;
  readonly pointer: string;
  readonly message: string;
  readonly atKey?: boolean;
  readonly suggestion?: string;
}

function describe(e: ErrorObject): Problem | undefined {
  const at = e.instancePath;
  const where = label(at);
  if (at === '/version') {
    return { code: 'BAD_SEMVER', pointer: at, message: `version ${JSON.stringify(e.data)} is not a semantic version like 1.2.0 (quote it in YAML: "1.2")` };
  }
  if (e.schemaPath.includes('/definitions/duration')) {
    if (e.keyword !== 'oneOf') return undefined;
    return { code: 'BAD_DURATION', pointer: at, message: `${where} is not a duration: give seconds as a number, or a string like 250ms, 2s, 1.5m, 1h` };
  }
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}).filter((k) => k !== '$schema');
      const suggestion = didYouMean(key, allowed);
      return {
        code: 'UNKNOWN_KEY',
        pointer: `${at}/${segment(key)}`,
        message: `unknown key '${key}' in ${where}${suggestionSuffix(suggestion)}; allowed: ${allowed.join(', ')}`,
        atKey: true,
        ...(suggestion ? { suggestion } : {}),
      };
    }
    case 'required':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} is missing the required key '${String(params.missingProperty)}'` };
    case 'type':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} must be ${String(params.type)}` };
    case 'pattern':
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} ${JSON.stringify(e.data)} is not valid: ${String((e.parentSchema as { description?: string })?.description ?? `must match ${String(params.pattern)}`)}` };
    default:
      return { code: 'PLUGIN_INVALID', pointer: at, message: `${where} ${e.message ?? 'is invalid'}` };
  }
}

/** Every schema problem of a manifest value, placed in its file. Empty when it passes. */
export function checkManifestSchema(value: unknown, file: string, sourceMap: SourceMap): Diagnostic[] {
  const validate = validatePluginManifest;
  if (validate(value)) return [];
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const problem = describe(error);
    if (!problem) continue;
    const key = `${problem.code}${problem.pointer}${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const at = problem.atKey ? sourceMap.keyAt(problem.pointer) : sourceMap.valueAt(problem.pointer);
    out.push({
      code: problem.code,
      severity: 'error',
      message: problem.message,
      file,
      pointer: problem.pointer,
      line: at.line,
      col: at.col,
      ...(problem.suggestion ? { suggestion: problem.suggestion } : {}),
    });
  }
  return out;
}
