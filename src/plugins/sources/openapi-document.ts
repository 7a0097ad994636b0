import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ALLOW_VARIABLE, parseAllowList } from '../../net/address-policy.js';
import { readLimited } from '../../net/read-limited.js';
import { sendRequest } from '../../net/send-request.js';
import { scanTokens } from '../../loader/depth-check.js';

// The document an OpenAPI plugin names: a file (relative paths start at the plugin folder) or an
// http(s) URL (fetched under the address policy), JSON or YAML, as it is written: its `$ref`s are
// followed later, where the operations use them (openapi-refs.ts). The document is not checked
// against the OpenAPI meta-schema as a whole (for GitHub's that takes seconds); what the tools use
// is checked as they are made, each schema by the validator.

export type ReadDocument =
  | { readonly ok: true; readonly document: Record<string, unknown>; readonly location: string; readonly url?: URL }
  | { readonly ok: false; readonly message: string };

const MAX_BYTES = 64 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
const MAX_DEPTH = 512;

export async function readDocument(spec: string, folder: string, env: Readonly<Record<string, string | undefined>>): Promise<ReadDocument> {
  let text: string;
  let url: URL | undefined;
  const remote = /^https?:\/\//i.test(spec);
  const location = remote ? spec : resolve(folder, spec);
  try {
    if (remote) {
      url = new URL(spec);
      const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
      const response = await sendRequest({ url, method: 'GET', headers: { accept: 'application/json, application/yaml, */*' }, signal, allow: parseAllowList(env[ALLOW_VARIABLE]) });
      const body = await readLimited(response, MAX_BYTES, signal);
      if ((response.statusCode ?? 0) >= 400) return { ok: false, message: `${spec} answered ${response.statusCode}` };
      text = new TextDecoder().decode(body);
    } else {
      text = await readFile(location, 'utf8');
      if (text.length > MAX_BYTES) return { ok: false, message: `${spec} is larger than ${MAX_BYTES / 1024 / 1024} MiB` };
    }
  } catch (error) {
    return { ok: false, message: `cannot read ${spec}: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    const t = text.trimStart();
    if (t.startsWith('{')) value = JSON.parse(text);
    else {
      if (scanTokens(text, MAX_DEPTH).tooDeep) return { ok: false, message: `${spec} nests deeper than ${MAX_DEPTH} levels` };
      value = parseYaml(text, { maxAliasCount: 1000, uniqueKeys: false });
    }
  } catch (error) {
    return { ok: false, message: `${spec} is neither JSON nor YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: `${spec} is not an OpenAPI document (no object at its top)` };
  const doc = value as Record<string, unknown>;
  if (typeof doc.openapi !== 'string' && doc.swagger !== '2.0') return { ok: false, message: `${spec} is not an OpenAPI 3.x or Swagger 2.0 document (it has neither 'openapi' nor 'swagger: "2.0"')` };
  if (typeof doc.openapi === 'string' && !/^3\.[01]\./.test(doc.openapi)) return { ok: false, message: `${spec} is OpenAPI ${doc.openapi}; versions 3.0 and 3.1 (and Swagger 2.0) are read` };
  return { ok: true, document: doc, location, ...(url ? { url } : {}) };
}
