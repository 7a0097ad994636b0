import type { Diagnostic, ErrorCode, Severity } from '../../common/errors.js';
import type { ToolContext, ToolDefinition } from '../../registry/types.js';
import type { ToolchainPluginManifest } from '../manifest.generated.js';
import { callOperation, type CallSettings } from './openapi-call.js';
import { readDocument } from './openapi-document.js';
import { listOperations, type Operation } from './openapi-operations.js';
import { RefError } from './openapi-refs.js';
import { distinctNames, type SourceTool } from './source-tools.js';

// An OpenAPI document → one tool per operation. A tool is named by its operationId made valid
// for the registry and for models (`repos/get-content` → `repos_get-content`; without one,
// method and path: `get_pets_petId`), and a name two operations meet on is reported. Deprecated
// operations are left out unless include_deprecated; operations that cannot be sent (a multipart
// body) are left out with a warning. No operation is dangerous unless the manifest names its
// method or the operation.

export type Place = (pointer: string, code: ErrorCode, message: string, severity?: Severity) => Diagnostic;

const DEFAULT_MAX_BYTES = 1024 * 1024;

export async function loadOpenApiTools(
  manifest: ToolchainPluginManifest,
  realDir: string,
  env: Readonly<Record<string, string | undefined>>,
  place: Place,
): Promise<{ ok: true; tools: SourceTool[]; warnings: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] }> {
  const config = manifest.source!.openapi!;
  const read = await readDocument(config.spec, realDir, env);
  if (!read.ok) return { ok: false, diagnostics: [place('/source/openapi/spec', 'PLUGIN_INVALID', read.message)] };
  let all: Operation[];
  try {
    all = listOperations(read.document);
  } catch (error) {
    if (!(error instanceof RefError)) throw error;
    return { ok: false, diagnostics: [place('/source/openapi/spec', 'PLUGIN_INVALID', `${config.spec}: its references do not resolve: ${error.message}`)] };
  }
  const baseUrl = config.base_url ?? baseUrlOf(read.document, read.url);
  if (baseUrl === undefined) {
    return { ok: false, diagnostics: [place('/source/openapi', 'MISSING_KEY', `${config.spec} names no absolute server URL; give 'base_url' (the API's root, e.g. https://api.example.com/v1)`)] };
  }
  const warnings: Diagnostic[] = [];
  const usable = all.filter((op) => !op.deprecated || config.include_deprecated === true);
  const { names, clashes } = distinctNames(usable.map((op) => op.operationId ?? `${op.method.toLowerCase()}_${op.path.replace(/[{}]/g, '')}`));
  for (const c of clashes) {
    warnings.push(place('/source/openapi/spec', 'NAME_COLLISION', `operations '${c.first}' and '${c.raw}' make the same tool name; '${c.raw}' is '${manifest.name}/${c.name}'`, 'warning'));
  }
  const settings: CallSettings = { baseUrl, ...(config.auth ? { auth: config.auth } : {}), maxBytes: config.max_bytes ?? DEFAULT_MAX_BYTES };
  const dangerousMethods = new Set(config.dangerous?.methods ?? []);
  const dangerousOps = new Set(config.dangerous?.operations ?? []);
  const tools = usable.map((op, k): SourceTool => {
    const name = names[k]!;
    const aliases = op.operationId !== undefined && op.operationId !== name ? [op.operationId] : [];
    const handler = (args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> => callOperation(op, args, ctx, settings);
    const def: ToolDefinition = {
      name,
      handler,
      description: op.description,
      parameters: op.parameters,
      ...(op.returns ? { returns: op.returns } : {}),
      dangerous: dangerousMethods.has(op.method as never) || dangerousOps.has(name) || aliases.some((a) => dangerousOps.has(a)),
    };
    // One that cannot be sent is left out, with a warning, when the filters keep it (source-tools.ts).
    const unsupported = op.unsupported ? { message: `operation ${op.operationId ?? `${op.method} ${op.path}`} is left out: ${op.unsupported}`, pointer: '/source/openapi/spec' } : undefined;
    return { name, aliases, tags: op.tags, def, ...(unsupported ? { unsupported } : {}) };
  });
  return { ok: true, tools, warnings };
}

/** The document's first server (variables at their defaults), or Swagger 2.0's scheme, host and basePath. */
function baseUrlOf(doc: Record<string, unknown>, from: URL | undefined): string | undefined {
  if (doc.swagger === '2.0') {
    if (typeof doc.host !== 'string') return undefined;
    const scheme = Array.isArray(doc.schemes) && doc.schemes.includes('https') ? 'https' : Array.isArray(doc.schemes) && typeof doc.schemes[0] === 'string' ? doc.schemes[0] : 'https';
    return `${scheme}://${doc.host}${typeof doc.basePath === 'string' ? doc.basePath : ''}`;
  }
  const first = Array.isArray(doc.servers) ? (doc.servers[0] as { url?: unknown; variables?: Record<string, { default?: unknown }> } | undefined) : undefined;
  if (!first || typeof first.url !== 'string') return undefined;
  const url = first.url.replace(/\{([^}]+)\}/g, (_m, v: string) => String(first.variables?.[v]?.default ?? ''));
  try {
    const absolute = from ? new URL(url, from) : new URL(url);
    return /^https?:$/.test(absolute.protocol) ? absolute.href : undefined;
  } catch {
    return undefined;
  }
}
