import { isRecord } from '../../common/json.js';
import { collectCalls } from './call-shape.js';
import { foundCall, type Found, type Span } from './format.js';
import type { KnownTools } from './known-tools.js';
import { parseLenientJson } from './lenient-json.js';
import { matchBracket } from './match-bracket.js';
import type { CallSink } from './types.js';

// What the JSON-based formats share: the calls a JSON value holds (call-shape.ts decides what a
// call looks like), placed at the span the value came from; and reading one JSON value (object or
// array) that starts at a given place, as `[TOOL_CALLS][…]` and `<|tool_call|>[…]` write them.

/** Adds the calls in `value` (a call, a list of calls, a wrapper) to `out`, all at `span`; returns how many entries were added or passed over. */
export function addJsonCalls(value: unknown, loose: boolean, span: Span, tools: KnownTools | undefined, out: Found): number {
  const sink: CallSink = { calls: [], problems: [], tools };
  const handled = collectCalls(value, loose, sink);
  for (const c of sink.calls) out.calls.push(foundCall(span, c.name, c.arguments, c.id));
  for (const p of sink.problems) {
    out.problems.push({
      start: span.start,
      end: span.end,
      message: p.message,
      raw: p.raw,
      code: p.code === 'INVALID_ARGUMENTS' ? 'INVALID_ARGUMENTS' : 'UNREADABLE_CALL',
      ...(p.name !== undefined ? { name: p.name } : {}),
      ...(p.id !== undefined ? { id: p.id } : {}),
    });
  }
  return handled;
}

export type JsonValueRead =
  | { readonly ok: true; readonly value: unknown; readonly end: number }
  | { readonly ok: false; readonly error: string; readonly end: number }
  /** The value is still open at the end of the text (only returned when `partial`). */
  | { readonly ok: 'open' };

/**
 * The JSON object or array whose opening bracket is the first non-space at or after `from`.
 * `end` is just past it (or the end of the text when it never closes).
 */
export function readJsonValue(text: string, from: number, partial: boolean, limit = text.length): JsonValueRead {
  let at = from;
  while (at < limit && /\s/.test(text[at]!)) at++;
  const open = text[at];
  // What was found is quoted up to `limit`: never the text of what follows (a stream sees less of it).
  if (open !== '{' && open !== '[' && open !== '\uff5b') return { ok: false, error: `expected JSON, found ${open === undefined || at >= limit ? 'the end of the text' : `'${text.slice(at, Math.min(limit, at + 16))}'`}`, end: at };
  const close = open === '[' ? matchSquare(text, at, limit) : matchBracket(text, at, limit);
  if (close < 0) {
    if (partial) return { ok: 'open' };
    const parsed = parseLenientJson(text.slice(at, limit));
    return parsed.ok ? { ok: true, value: parsed.value, end: limit } : { ok: false, error: `unterminated JSON: ${parsed.error}`, end: limit };
  }
  const parsed = parseLenientJson(text.slice(at, close + 1));
  return parsed.ok ? { ok: true, value: parsed.value, end: close + 1 } : { ok: false, error: parsed.error, end: close + 1 };
}

/**
 * The `]` that closes the `[` at `start` (strings respected), or -1. A closing bracket that skips
 * an open one (`[{"a": {"b": 1}]`, one `}` short) closes it too, as the JSON repair does (vLLM's
 * partial-JSON reading recovers such calls); one with no opener to match ends nothing (-1).
 */
export function matchSquare(text: string, start: number, end = text.length): number {
  const open: number[] = [];
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i++;
      while (i < end && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      if (i >= end) return -1;
    } else if (c === 0x5b || c === 0x7b) {
      open.push(c);
    } else if (c === 0x5d || c === 0x7d) {
      const opener = c === 0x5d ? 0x5b : 0x7b;
      const at = open.lastIndexOf(opener);
      if (at < 0) return -1;
      open.length = at;
      if (at === 0) return c === 0x5d ? i : -1;
    }
  }
  return -1;
}

/** A parsed value as a call's arguments: an object as is; anything else as JSON text, which the registry reports as not an object. */
export function asArguments(value: unknown): Record<string, unknown> | string {
  if (isRecord(value)) return value;
  return typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'null');
}
