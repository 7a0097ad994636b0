import { type ToolContext, toolError } from '../lib/tool-context.js';

// http_request: one HTTP(S) request with Node's fetch.
// - Cancellation: the step's signal (its timeout, or the run being cancelled) and the tool's own
//   timeout_ms both abort the request; running out of timeout_ms fails with TIMEOUT.
// - The body is read as a stream and the request is aborted as soon as it passes max_bytes
//   (RESPONSE_TOO_LARGE); a Content-Length over the limit fails before reading.
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

const RETRYABLE = new Set([408, 429]);
const JSON_TYPE = /\bjson\b|\+json\b/i;

export default async function httpRequest(args: Args, ctx?: ToolContext): Promise<HttpResponse> {
  const { method = 'GET', headers = {}, timeout_ms = 10_000, max_bytes = 1024 * 1024, fail_on_4xx = false, response_type = 'auto' } = args;
  const url = parseUrl(args.url);
  let requestHeaders: Headers;
  try {
    requestHeaders = new Headers(headers);
  } catch (error) {
    throw toolError('BAD_ARGUMENT', `headers are not valid: ${(error as Error).message}`);
  }
  let body: string | undefined;
  if (args.body !== undefined && args.body !== null) {
    if (method === 'GET' || method === 'HEAD') throw toolError('BAD_ARGUMENT', `a ${method} request cannot have a body`);
    if (typeof args.body === 'string') body = args.body;
    else {
      body = JSON.stringify(args.body);
      if (!requestHeaders.has('content-type')) requestHeaders.set('content-type', 'application/json');
    }
  }
  const timeout = AbortSignal.timeout(timeout_ms);
  const signal = ctx ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  const started = performance.now();
  try {
    const response = await fetch(url, { method, headers: requestHeaders, body, signal, redirect: 'follow' });
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > max_bytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(declared, max_bytes);
    }
    const bytes = await readLimited(response, max_bytes);
    const text = new TextDecoder().decode(bytes);
    if (response.status >= 500 || RETRYABLE.has(response.status)) {
      throw toolError('HTTP_ERROR', `${method} ${url.href} answered ${response.status} ${response.statusText}${snippet(text)}`);
    }
    if (fail_on_4xx && response.status >= 400) {
      throw toolError('HTTP_CLIENT_ERROR', `${method} ${url.href} answered ${response.status} ${response.statusText}${snippet(text)}`);
    }
    const json = response_type === 'json' || (response_type === 'auto' && JSON_TYPE.test(response.headers.get('content-type') ?? '') && text.trim() !== '');
    return {
      url: response.url || url.href,
      status: response.status,
      status_text: response.statusText,
      headers: Object.fromEntries(response.headers),
      body: json ? parseJson(text) : text,
      bytes: bytes.length,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (isToolError(error)) throw error;
    if (ctx?.signal.aborted) throw ctx.signal.reason ?? error;
    if (timeout.aborted) throw toolError('TIMEOUT', `${method} ${url.href} did not finish within ${timeout_ms} ms`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw toolError('NETWORK_ERROR', `${method} ${url.href} failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw toolError('BAD_URL', `"${raw}" is not an absolute URL such as https://example.com/page`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw toolError('BAD_URL', `"${raw}" uses ${url.protocol}; only http: and https: URLs are fetched`);
  }
  return url;
}

/** The body's bytes, cancelling the stream as soon as it passes the limit. */
async function readLimited(response: Response, limit: number): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(total, limit, true);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function tooLarge(size: number, limit: number, partial = false): Error {
  const what = partial ? `more than ${limit} bytes (stopped at ${size})` : `${size} bytes`;
  return toolError('RESPONSE_TOO_LARGE', `the response has ${what}; max_bytes is ${limit}`);
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

function isToolError(error: unknown): boolean {
  return error instanceof Error && !(error instanceof TypeError) && typeof (error as { code?: unknown }).code === 'string';
}
