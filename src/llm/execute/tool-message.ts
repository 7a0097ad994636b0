import { truncateResult } from '../../registry/truncate-result.js';

// The answer to one call, as a chat API's tool message. `content` is always JSON text:
//
//   success   the result itself                     {"time": "14:05", …}
//   failure   {"error": {"code": …, "message": …}}  with the registry's wording
//   too long  {"truncated": true, "original_chars": 52340, "value": <the cut result>}
//             (a result the registry cut already keeps its one wrapper, `original_bytes`, cut further)
//
// A result over the limit is cut the way the registry cuts results of `truncate: true` tools
// (strings keep their beginning, arrays their first items, objects their first members), so the
// model still reads valid JSON and sees plainly that it got part of it. `is_error` is not an
// OpenAI field: strip it before sending the message to an API that rejects unknown keys.

export interface ToolMessage {
  readonly role: 'tool';
  readonly tool_call_id: string;
  readonly content: string;
  readonly is_error: boolean;
}

export const DEFAULT_MAX_RESULT_CHARS = 20_000;

/** A result the registry already cut (`truncate: true`): `{ truncated, original_bytes, value }`. */
function isTruncated(value: unknown): value is { truncated: true; original_bytes: number; value: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.truncated === true && typeof v.original_bytes === 'number' && 'value' in v && Object.keys(v).length === 3;
}

function cut(value: unknown, json: string, maxChars: number): string {
  // A result the registry cut already is cut further inside its own wrapper, not wrapped twice:
  // the reader looks for one `truncated` and one `value`.
  const inner = isTruncated(value) ? value.value : value;
  const wrap = (v: unknown): string =>
    isTruncated(value) ? JSON.stringify({ truncated: true, original_bytes: value.original_bytes, value: v }) : JSON.stringify({ truncated: true, original_chars: json.length, value: v });
  // The budget is in UTF-8 bytes, never fewer than characters, so fitting the bytes fits the characters.
  let budget = maxChars - 48;
  for (let tries = 0; tries < 5 && budget > 0; tries++) {
    const text = wrap(truncateResult(inner, Buffer.byteLength(json), budget).value);
    if (text.length <= maxChars) return text;
    budget -= text.length - maxChars;
  }
  return wrap(null);
}

export function successMessage(id: string, value: unknown, maxChars: number): ToolMessage {
  let json: string;
  try {
    json = JSON.stringify(value ?? null);
  } catch (error) {
    return errorMessage(id, 'RESULT_INVALID', `the result is not JSON: ${(error as Error).message}`, maxChars);
  }
  return { role: 'tool', tool_call_id: id, content: json.length <= maxChars ? json : cut(value ?? null, json, maxChars), is_error: false };
}

export function errorMessage(id: string, code: string, message: string, maxChars: number): ToolMessage {
  let content = JSON.stringify({ error: { code, message } });
  // Escapes make the JSON longer than the message by an amount known only after encoding.
  for (let room = message.length; content.length > maxChars && room > 0; ) {
    room = Math.max(0, room - (content.length - maxChars) - 1);
    content = JSON.stringify({ error: { code, message: `${message.slice(0, room)}…` } });
  }
  return { role: 'tool', tool_call_id: id, content, is_error: true };
}
