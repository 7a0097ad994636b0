import { codeForStatus, ModelError } from './model-error.js';
import { readReply } from './read-reply.js';
import type { ChatReply, ChatRequest } from './wire.js';

// One `POST {base_url}/chat/completions` with fetch. The signal aborts the request; an aborted
// request rejects with the signal's reason, so the executor sees its own TIMEOUT or ABORTED.
// Every other failure becomes a ModelError whose code says whether retrying can help.

export interface Endpoint {
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; undefined sends no Authorization header. */
  readonly apiKey: string | undefined;
}

/** How much of an error body ends up in a message: enough for the API's sentence, not a page of HTML. */
const MAX_ERROR_TEXT = 500;

export async function requestCompletion(endpoint: Endpoint, body: ChatRequest, signal: AbortSignal): Promise<ChatReply> {
  const url = `${endpoint.baseUrl}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (endpoint.apiKey !== undefined) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const detail = typeof cause?.code === 'string' ? cause.code : String(cause?.message ?? (error as Error).message);
    throw new ModelError('MODEL_UNREACHABLE', `the model endpoint ${url} could not be reached (${detail})`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new ModelError('MODEL_ERROR', `the model endpoint ${url} broke off its answer: ${(error as Error).message}`, response.status);
  }
  if (!response.ok) throw httpError(url, response, text);
  return readReply(url, text);
}

function httpError(url: string, response: Response, text: string): ModelError {
  const code = codeForStatus(response.status);
  const retryAfter = response.headers.get('retry-after');
  const wait = code === 'RATE_LIMITED' && retryAfter ? `; retry after ${retryAfter} s` : '';
  const message = `the model endpoint ${url} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${apiMessage(text)}${wait}`;
  return new ModelError(code, message, response.status);
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
