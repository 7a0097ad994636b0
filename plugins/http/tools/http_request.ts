import type { IncomingMessage } from 'node:http';
import { ALLOW_VARIABLE, parseAllowList } from '../lib/address-policy.js';
import { readLimited, sendRequest, tooLarge } from '../lib/send-request.js';
import { isToolError, type ToolContext, toolError } from '../lib/tool-context.js';

// http_request: one HTTP(S) request, its redirects followed one hop at a time.
// - Addresses: only public ones, unless TOOLCHAIN_HTTP_ALLOW lists them (lib/address-policy.ts);
//   checked on the addresses DNS gives at connection time, for the first URL and every redirect
//   (ADDRESS_REFUSED, not worth retrying). At most 10 redirects (TOO_MANY_REDIRECTS); a 303, or a
//   301/302 after a POST, continues as a GET without body, as browsers do; credentials
//   (authorization, cookie) are not sent on to another origin.
// - Cancellation: the step's signal (its timeout, or the run being cancelled) and the tool's own
//   timeout_ms both abort the request; running out of timeout_ms fails with TIMEOUT.
// - The body is read as a stream (gzip, deflate and br decoded) and abandoned as soon as it passes
//   max_bytes (RESPONSE_TOO_LARGE); a Content-Length over the limit fails before reading.
// - With response_type auto, a JSON content type is parsed (BAD_RESPONSE when it does not parse)
//   and anything else is text; `text` and `json` force one reading.
// - Status 5xx, 408 and 429 fail with HTTP_ERROR, which is worth retrying (`retry_on: [HTTP_ERROR]`).
//   Other 4xx answers are results, so a chain can look at `status` — unless fail_on_4xx is set,
//   which turns them into HTTP_CLIENT_ERROR (not worth retrying).
// - A refused connection, DNS failure or reset fails with NETWORK_ERROR.

interface Args {
  readonly url: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly timeout_ms?: number;
  readonly max_bytes?: number;
  readonly fail_on_4xx?: boolean;
  readonly response_type?: 'auto' | 'json' | 'text';
}

export interface HttpResponse {
  /** The final URL, after redirects. */
  readonly url: string;
  readonly status: number;
  readonly status_text: string;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON for a JSON content type, otherwise the text. */
  readonly body: unknown;
  readonly bytes: number;
  readonly elapsed_ms: number;
}

export const MAX_REDIRECTS = 10;
const RETRYABLE = new Set([408, 429]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];
const JSON_TYPE = /\bjson\b|\+json\b/i;

export default async function httpRequest(args: Args, ctx?: ToolContext): Promise<HttpResponse> {
  const { method = 'GET', headers = {}, timeout_ms = 10_000, max_bytes = 1024 * 1024, fail_on_4xx = false, response_type = 'auto' } = args;
  const first = parseUrl(args.url);
  const allow = parseAllowList((ctx ? ctx.env : process.env)[ALLOW_VARIABLE]);
  let requestHeaders: Record<string, string>;
  try {
    requestHeaders = Object.fromEntries(new Headers(headers));
  } catch (error) {
    throw toolError('BAD_ARGUMENT', `headers are not valid: ${(error as Error).message}`);
  }
  let body: string | undefined;
  if (args.body !== undefined && args.body !== null) {
    if (method === 'GET' || method === 'HEAD') throw toolError('BAD_ARGUMENT', `a ${method} request cannot have a body`);
    if (typeof args.body === 'string') body = args.body;
    else {
      body = JSON.stringify(args.body);
      requestHeaders['content-type'] ??= 'application/json';
    }
  }
  const timeout = AbortSignal.timeout(timeout_ms);
  const signal = ctx ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  const started = performance.now();
  let url = first;
  let verb = method;
  try {
    let response: IncomingMessage;
    for (let hop = 0; ; hop++) {
      response = await sendRequest({ url, method: verb, headers: requestHeaders, ...(body !== undefined ? { body } : {}), signal, allow });
      const location = response.headers.location;
      if (!REDIRECT.has(response.statusCode ?? 0) || location === undefined) break;
      response.resume(); // drain and free the socket
      if (hop === MAX_REDIRECTS) throw toolError('TOO_MANY_REDIRECTS', `${method} ${first.href} redirected more than ${MAX_REDIRECTS} times`);
      const next = parseUrl(location, url);
      if (next.origin !== url.origin) for (const h of CREDENTIALS) delete requestHeaders[h];
      if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && verb === 'POST')) {
        if (verb !== 'HEAD') verb = 'GET';
        body = undefined;
        delete requestHeaders['content-type'];
      }
      url = next;
    }
    const status = response.statusCode ?? 0;
    const statusText = response.statusMessage ?? '';
    const responseHeaders = headersOf(response);
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > max_bytes && !response.headers['content-encoding']) {
      response.destroy();
      throw tooLarge(declared, max_bytes);
    }
    const bytes = await readLimited(response, max_bytes, signal);
    const text = new TextDecoder().decode(bytes);
    if (status >= 500 || RETRYABLE.has(status)) {
      throw toolError('HTTP_ERROR', `${verb} ${url.href} answered ${status} ${statusText}${snippet(text)}`);
    }
    if (fail_on_4xx && status >= 400) {
      throw toolError('HTTP_CLIENT_ERROR', `${verb} ${url.href} answered ${status} ${statusText}${snippet(text)}`);
    }
    const json = response_type === 'json' || (response_type === 'auto' && JSON_TYPE.test(responseHeaders['content-type'] ?? '') && text.trim() !== '');
    return {
      url: url.href,
      status,
      status_text: statusText,
      headers: responseHeaders,
      body: json ? parseJson(text) : text,
      bytes: bytes.length,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (isToolError(error)) throw error;
    if (ctx?.signal.aborted) throw ctx.signal.reason ?? error;
    if (timeout.aborted) throw toolError('TIMEOUT', `${verb} ${url.href} did not finish within ${timeout_ms} ms`);
    const e = error as { code?: string; message?: string };
    throw toolError('NETWORK_ERROR', `${verb} ${url.href} failed: ${e.code ?? e.message ?? String(error)}`);
  }
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw toolError('BAD_URL', `"${raw}" is not an absolute URL such as https://example.com/page`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw toolError('BAD_URL', `"${raw}" uses ${url.protocol}; only http: and https: URLs are fetched`);
  }
  return url;
}

/** Names in lower case; repeated headers joined as fetch's Headers joins them. */
function headersOf(response: IncomingMessage): Record<string, string> {
  const h = new Headers();
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      h.append(raw[i]!, raw[i + 1]!);
    } catch {
      // a header value fetch would refuse: left out
    }
  }
  return Object.fromEntries(h);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw toolError('BAD_RESPONSE', `the response says it is JSON but does not parse: ${(error as Error).message}`);
  }
}

function snippet(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  return t === '' ? '' : `: ${t.length > 200 ? `${t.slice(0, 197)}...` : t}`;
}
