import { ModelError } from './model-error.js';
import type { ChatReply, TokenUsage, WireToolCall } from './wire.js';
import { isRecord } from '../../common/json.js';

// A chat-completions response body checked field by field: an endpoint that answers 200 with
// something else (an HTML error page, a proxy's JSON) is a MODEL_ERROR naming what was wrong,
// not a TypeError deep inside the loop.

const NO_USAGE: TokenUsage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export function readReply(url: string, text: string): ChatReply {
  const bad = (what: string): ModelError => new ModelError('MODEL_ERROR', `the model endpoint ${url} sent a response that is not a chat completion: ${what}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw bad('the body is not JSON');
  }
  const choices = isRecord(body) ? body.choices : undefined;
  if (!Array.isArray(choices) || choices.length === 0) throw bad("'choices' is missing or empty");
  const choice: unknown = choices[0];
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message)) throw bad("'choices[0].message' is missing");
  const content = message.content;
  if (content !== null && content !== undefined && typeof content !== 'string') throw bad("'message.content' is neither text nor null");
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls)) throw bad("'message.tool_calls' is not an array");
  const toolCalls = (calls ?? []).map((c: unknown, k: number) => toolCall(c, k, bad));
  const finish = isRecord(choice) ? choice.finish_reason : undefined;
  return {
    message: { role: 'assistant', content: content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
    finish_reason: typeof finish === 'string' ? finish : null,
    usage: usageOf(isRecord(body) ? body.usage : undefined),
  };
}

function toolCall(raw: unknown, k: number, bad: (what: string) => ModelError): WireToolCall {
  const fn = isRecord(raw) ? raw.function : undefined;
  if (!isRecord(raw) || !isRecord(fn) || typeof fn.name !== 'string') throw bad(`tool_calls[${k}] has no function name`);
  // Arguments arrive as a JSON string; some servers send an object. Either is kept as text, the
  // form the API expects back in the transcript; parsing and its errors are the caller's.
  const args = typeof fn.arguments === 'string' ? fn.arguments : fn.arguments === undefined ? '' : JSON.stringify(fn.arguments);
  // The id must be echoed in the tool message; an endpoint that omits it gets one made up here,
  // and the transcript carries that id on both sides.
  const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `call_${k}_${Math.random().toString(36).slice(2, 10)}`;
  return { id, type: 'function', function: { name: fn.name, arguments: args } };
}

function usageOf(raw: unknown): TokenUsage {
  if (!isRecord(raw)) return NO_USAGE;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  const prompt = n(raw.prompt_tokens);
  const completion = n(raw.completion_tokens);
  const total = typeof raw.total_tokens === 'number' ? n(raw.total_tokens) : prompt + completion;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

