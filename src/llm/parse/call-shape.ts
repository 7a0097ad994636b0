import { describeKind } from '../../common/errors.js';
import { parseLenientJson } from './lenient-json.js';
import { isRecord } from '../../common/json.js';
import { isEnvelope, isPlaceholderName, isSchemaLike } from './not-a-call.js';
import { problem, type CallSink } from './types.js';

// The shapes a call takes once it is a JSON value. Models trained on different protocols name the
// same two things differently:
//
//   { "name": "get_weather", "arguments": { "city": "杭州" } }         the common text protocol
//   { "tool": …, "args": … }  { "tool_name": …, "parameters": … }       variants
//   { "function": "get_weather", "input": … }
//   { "type": "function", "function": { "name": …, "arguments": "…" } } OpenAI's, pasted as text
//   { "type": "tool_use", "id": …, "name": …, "input": … }               Anthropic's
//   { "tool_calls": [ … ] }, [ call, call ]                              several at once
//
// `arguments` may itself be a JSON string (OpenAI's wire format), sometimes encoded twice.
// Tool definitions, JSON-RPC envelopes and echoed placeholders have the shape without being calls
// (not-a-call.ts): they are passed over, and not searched for calls inside.

const NAME_KEYS = ['name', 'tool', 'tool_name', 'function'] as const;
const ARGUMENT_KEYS = ['arguments', 'args', 'parameters', 'input'] as const;
const ID_KEYS = ['id', 'call_id', 'tool_call_id'] as const;
/** Keys that may sit beside a name in a call that has no arguments. */
const META_KEYS = new Set<string>(['id', 'call_id', 'tool_call_id', 'type', ...NAME_KEYS]);
/** How deep `{ "tool_calls": [ … ] }`-style wrappers are searched. */
const MAX_WRAPPER_DEPTH = 6;

export type ArgumentsResult = { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly message: string };

/** A call's arguments as an object: given as one, as JSON text, or not at all (`{}`). */
export function toArguments(value: unknown): ArgumentsResult {
  if (value === undefined || value === null) return { ok: true, value: {} };
  if (isRecord(value)) return { ok: true, value };
  if (typeof value === 'string') {
    if (value.trim() === '') return { ok: true, value: {} };
    const parsed = parseLenientJson(value);
    if (!parsed.ok) return { ok: false, message: `the arguments are not valid JSON: ${parsed.error}` };
    // JSON text of JSON text: `"{\"city\": \"Paris\"}"`.
    if (typeof parsed.value === 'string') return toArguments(parsed.value);
    if (isRecord(parsed.value)) return { ok: true, value: parsed.value };
    return { ok: false, message: `the arguments must be a JSON object, got ${describeKind(parsed.value)}` };
  }
  return { ok: false, message: `the arguments must be a JSON object, got ${describeKind(value)}` };
}

function stringKey(obj: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = obj[key];
    if (typeof value === 'string' && value.trim() !== '' && Object.hasOwn(obj, key)) return value.trim();
  }
  return undefined;
}

function argumentKey(obj: Record<string, unknown>): string | undefined {
  for (const key of ARGUMENT_KEYS) if (Object.hasOwn(obj, key)) return key;
  return undefined;
}

function rawOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Where a call was found, for the sink: its format and its offset in the text. */
export interface CallPlace {
  readonly format?: string | undefined;
  readonly at?: number | undefined;
}

/**
 * Adds the call `obj` describes to the sink and returns true, or returns false when it is not a
 * call. `loose`: inside a fence or a <tool_call> tag, where a bare `{ "name": … }` is a call
 * without arguments; in prose an object also needs an arguments key, so that data such as
 * `{ "name": "Alice", "age": 3 }` is not taken for a call. Returns true without adding anything
 * for a definition or an echoed placeholder, so that nothing inside it is searched either
 * (`structured`: an API's own tool_calls, taken as they are).
 */
export function addCall(obj: Record<string, unknown>, loose: boolean, sink: CallSink, place: CallPlace = {}, structured = false): boolean {
  // A structured call (an API's tool_calls) is never passed over: its id expects an answer.
  if (!structured && isEnvelope(obj)) return true;
  const id = stringKey(obj, ID_KEYS);
  const fn = obj.function;
  let name: string | undefined;
  let args: unknown;
  if (isRecord(fn) && typeof fn.name === 'string' && Object.hasOwn(obj, 'function')) {
    name = fn.name.trim();
    args = fn.arguments ?? fn.args ?? fn.parameters ?? fn.input;
  } else {
    name = stringKey(obj, NAME_KEYS);
    if (name === undefined) return false;
    const key = argumentKey(obj);
    if (key === undefined) {
      const onlyMeta = Object.keys(obj).every((k) => META_KEYS.has(k));
      if (!(loose && onlyMeta) && obj.type !== 'tool_use' && obj.type !== 'function') return false;
    } else {
      args = obj[key];
    }
  }
  if (name === '') {
    sink.problems.push(problem('UNREADABLE_CALL', 'the call has an empty tool name', rawOf(obj), { id, ...place }));
    return true;
  }
  if (!structured && isPlaceholderName(name, sink.tools)) return true;
  const parsed = toArguments(args);
  if (!structured && parsed.ok && isSchemaLike(parsed.value, name, sink.tools)) return true;
  if (parsed.ok) sink.calls.push({ id, name, arguments: parsed.value, ...place });
  else sink.problems.push(problem('INVALID_ARGUMENTS', `call to '${name}': ${parsed.message}`, typeof args === 'string' ? args : rawOf(args), { id, name, ...place }));
  return true;
}

/** Every call in a parsed JSON value (a call, an array of calls, or a wrapper around them); returns how many entries it added. */
export function collectCalls(value: unknown, loose: boolean, sink: CallSink, place: CallPlace = {}, depth = 0): number {
  if (depth > MAX_WRAPPER_DEPTH) return 0;
  if (Array.isArray(value)) {
    let found = 0;
    for (const item of value) found += collectCalls(item, loose, sink, place, depth + 1);
    return found;
  }
  if (!isRecord(value)) return 0;
  if (addCall(value, loose, sink, place)) return 1;
  let found = 0;
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (typeof child === 'object' && child !== null) found += collectCalls(child, loose, sink, place, depth + 1);
  }
  return found;
}
