import type { IncomingMessage } from 'node:http';
import { NetError, readLimited, sendRequest, tooLarge } from '../../net/index.js';
import { MAX_REPLY_BYTES } from './agent-limits.js';
import { codeForStatus, ModelError } from './model-error.js';
import { MODEL_ALLOW_VARIABLE } from './model-policy.js';
import { readReply } from './read-reply.js';
import type { AllowEntry } from '../../net/index.js';
import type { ChatReply, ChatRequest } from './wire.js';

// One `POST {base_url}/chat/completions`, through the address policy of outbound HTTP (the
// endpoint's address is checked as it is connected to, redirects are not followed) and read as a
// stream of at most MAX_REPLY_BYTES. The signal aborts the request; an aborted request rejects
// with the signal's reason, so the executor sees its own TIMEOUT or ABORTED. Every other failure
// becomes a ModelError whose code says whether retrying can help.

export interface Endpoint {
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; undefined sends no Authorization header. */
  readonly apiKey: string | undefined;
  /** Addresses allowed although the policy refuses them (TOOLCHAIN_MODEL_ALLOW). */
  readonly allow: readonly AllowEntry[];
}

/** How much of an error body ends up in a message: enough for the API's sentence, not a page of HTML. */
const MAX_ERROR_TEXT = 500;

export async function requestCompletion(endpoint: Endpoint, body: ChatRequest, signal: AbortSignal): Promise<ChatReply> {
  const href = `${endpoint.baseUrl}/chat/completions`;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new ModelError('MODEL_REJECTED', `the model endpoint ${href} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ModelError('MODEL_REJECTED', `the model endpoint ${href} is not http or https`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'accept-encoding': 'gzip, deflate, br' };
  if (endpoint.apiKey !== undefined) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: IncomingMessage;
  try {
    response = await sendRequest({ url, method: 'POST', headers, body: JSON.stringify(body), signal, allow: endpoint.allow });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof NetError && error.code === 'ADDRESS_REFUSED') {
      throw new ModelError('MODEL_ADDRESS_REFUSED', `${error.message.split('; ')[0]}; model endpoints at loopback, private, link-local and metadata addresses are refused unless ${MODEL_ALLOW_VARIABLE} lists them (e.g. ${MODEL_ALLOW_VARIABLE}=127.0.0.1:11434)`);
    }
    const code = (error as { code?: unknown }).code;
    throw new ModelError('MODEL_UNREACHABLE', `the model endpoint ${href} could not be reached (${typeof code === 'string' ? code : (error as Error).message})`);
  }
  const status = response.statusCode ?? 0;
  if (status >= 300 && status < 400) {
    response.destroy();
    throw new ModelError('MODEL_REJECTED', `the model endpoint ${href} answered ${status} (to ${String(response.headers.location ?? 'nowhere')}); redirects are not followed: set base_url to where the API answers`, status);
  }
  let text: string;
  try {
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_REPLY_BYTES && !response.headers['content-encoding']) {
      response.destroy();
      throw tooLarge(declared, MAX_REPLY_BYTES);
    }
    text = Buffer.from(await readLimited(response, MAX_REPLY_BYTES, signal)).toString('utf8');
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof NetError && error.code === 'RESPONSE_TOO_LARGE') {
      throw new ModelError('MODEL_REPLY_TOO_LARGE', `the model endpoint ${href} sent a reply of ${error.message.replace(/^the response has /, '').replace(/; max_bytes is \d+$/, '')}; at most ${MAX_REPLY_BYTES} bytes are read`, status);
    }
    throw new ModelError('MODEL_ERROR', `the model endpoint ${href} broke off its answer: ${(error as Error).message}`, status);
  }
  if (status < 200 || status >= 300) throw httpError(href, response, status, text);
  return readReply(href, text);
}

function httpError(url: string, response: IncomingMessage, status: number, text: string): ModelError {
  const code = codeForStatus(status);
  const retryAfter = response.headers['retry-after'];
  const wait = code === 'RATE_LIMITED' && typeof retryAfter === 'string' && retryAfter !== '' ? `; retry after ${retryAfter} s` : '';
  const message = `the model endpoint ${url} answered ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}: ${apiMessage(text)}${wait}`;
  return new ModelError(code, message, status);
}

/** OpenAI-style `{ error: { message } }`, or `{ message }`, or the text itself, shortened. */
function apiMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string' && message !== '') return shorten(message);
  } catch {
    // Not JSON: fall through to the text.
  }
  return shorten(text.trim() || '(empty body)');
}

function shorten(text: string): string {
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
