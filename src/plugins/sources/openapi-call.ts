import { ToolchainError } from '../../common/errors.js';
import { ALLOW_VARIABLE, parseAllowList } from '../../net/address-policy.js';
import { NetError } from '../../net/net-error.js';
import { declaredTooLarge, readLimited, tooLarge } from '../../net/read-limited.js';
import { sendRequest } from '../../net/send-request.js';
import type { ToolContext } from '../../registry/types.js';
import type { OpenapiAuth } from '../manifest.generated.js';
import type { Operation, OperationParam } from './openapi-operations.js';

// One call of an OpenAPI operation: the arguments laid out as the operation says (path
// parameters into the path, query parameters into the query — arrays repeated, deepObject as
// name[key] — headers, cookies, and `body` as JSON or as a form), credentials from the
// environment, sent under the address policy with the step's signal, and the answer read up to
// the size limit. The result is the response body (JSON parsed, other text as it is, nothing as
// null). A 429 fails with HTTP_429, another 4xx with HTTP_4XX and a 5xx with HTTP_5XX, each with
// the status and the start of what the server said; a redirect is not followed (TOOL_ERROR).

export interface CallSettings {
  readonly baseUrl: string;
  readonly auth?: OpenapiAuth;
  readonly maxBytes: number;
}

const JSON_TYPE = /\bjson\b/i;

export function requestOf(op: Operation, args: Record<string, unknown>, settings: CallSettings, env: Readonly<Record<string, string | undefined>>): { url: URL; headers: Record<string, string>; body?: string } {
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' };
  const cookies: string[] = [];
  for (const p of op.params) {
    const value = args[p.arg];
    if (value === undefined) continue;
    if (p.in === 'path') path = path.split(`{${p.name}}`).join(encodeURIComponent(scalar(value)));
    else if (p.in === 'query') addQuery(query, p, value);
    else if (p.in === 'header') headers[p.name.toLowerCase()] = scalar(value);
    else cookies.push(`${p.name}=${encodeURIComponent(scalar(value))}`);
  }
  if (cookies.length) headers.cookie = cookies.join('; ');
  const url = new URL(settings.baseUrl.replace(/\/+$/, '') + path);
  for (const [k, v] of query) url.searchParams.append(k, v);
  let body: string | undefined;
  if (op.body && args.body !== undefined) {
    if (op.body.contentType === 'json') {
      body = JSON.stringify(args.body);
      headers['content-type'] = op.body.mediaType === '*/*' ? 'application/json' : op.body.mediaType;
    } else {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries((args.body ?? {}) as Record<string, unknown>)) addQuery(form, { arg: k, name: k, in: 'query' }, v);
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
  }
  Object.assign(headers, credentials(settings.auth, env));
  return { url, headers, ...(body !== undefined ? { body } : {}) };
}

function scalar(value: unknown): string {
  if (Array.isArray(value)) return value.map(scalar).join(',');
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function addQuery(query: URLSearchParams, p: OperationParam, value: unknown): void {
  if (Array.isArray(value)) {
    if (p.explode === false) query.append(p.name, value.map(scalar).join(','));
    else for (const v of value) query.append(p.name, scalar(v));
  } else if (typeof value === 'object' && value !== null && p.style === 'deepObject') {
    for (const [k, v] of Object.entries(value)) query.append(`${p.name}[${k}]`, scalar(v));
  } else query.append(p.name, scalar(value));
}

function credentials(auth: OpenapiAuth | undefined, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  if (!auth) return {};
  if (auth.bearer_env !== undefined) return { authorization: `Bearer ${env[auth.bearer_env] ?? ''}` };
  if (auth.header !== undefined && auth.env !== undefined) return { [auth.header.toLowerCase()]: env[auth.env] ?? '' };
  if (auth.basic) {
    const pair = `${env[auth.basic.username_env] ?? ''}:${env[auth.basic.password_env] ?? ''}`;
    return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
  }
  return {};
}

export async function callOperation(op: Operation, args: Record<string, unknown>, ctx: ToolContext, settings: CallSettings): Promise<unknown> {
  const { url, headers, body } = requestOf(op, args, settings, ctx.env);
  const where = `${op.method} ${url.origin}${url.pathname}`;
  let response;
  try {
    response = await sendRequest({ url, method: op.method, headers, ...(body !== undefined ? { body } : {}), signal: ctx.signal, allow: parseAllowList(ctx.env[ALLOW_VARIABLE]) });
    const declared = declaredTooLarge(response, settings.maxBytes);
    if (declared !== undefined) {
      response.destroy();
      throw tooLarge(declared, settings.maxBytes);
    }
    const bytes = await readLimited(response, settings.maxBytes, ctx.signal);
    const text = new TextDecoder().decode(bytes);
    const status = response.statusCode ?? 0;
    if (status >= 300) throw statusError(status, response.statusMessage ?? '', where, text, response.headers.location);
    if (text.trim() === '') return null;
    if (!JSON_TYPE.test(String(response.headers['content-type'] ?? ''))) return text;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new NetError('BAD_RESPONSE', `${where} said its answer is JSON, but it does not parse: ${(error as Error).message}`);
    }
  } catch (error) {
    if (error instanceof NetError || error instanceof ToolchainError) throw error;
    if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
    const e = error as { code?: string; message?: string };
    throw new NetError('NETWORK_ERROR', `${where} failed: ${e.code ?? e.message ?? String(error)}`);
  }
}

function statusError(status: number, statusText: string, where: string, text: string, location: string | undefined): ToolchainError {
  const said = text.trim().replace(/\s+/g, ' ');
  const snippet = said === '' ? '' : `: ${said.length > 300 ? `${said.slice(0, 297)}...` : said}`;
  const line = `${where} answered ${status} ${statusText}${snippet}`;
  if (status === 429) return new ToolchainError('HTTP_429', line);
  if (status >= 500) return new ToolchainError('HTTP_5XX', line);
  if (status >= 400) return new ToolchainError('HTTP_4XX', line);
  return new ToolchainError('TOOL_ERROR', `${line}${location ? ` (to ${location})` : ''}; redirects are not followed: set base_url to where the API answers`);
}
