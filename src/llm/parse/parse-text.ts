import { collectCalls, toArguments } from './call-shape.js';
import { parseLenientJson } from './lenient-json.js';
import { matchBracket } from './match-bracket.js';
import { problem, type CallSink } from './types.js';

// Calls written in plain text, by models without native function calling (or told to use a text
// protocol). One left-to-right scan finds, in the order they appear:
//
//   <tool>NAME</tool><args>{…}</args>      tags, several per text (the args tag may be missing for
//                                          a call without arguments; <arguments> also works)
//   <tool_call>{json}</tool_call>          Hermes / Qwen style
//   ```json {…} ```                        fenced blocks (any language, or none)
//   {…}                                    a bare JSON object in prose, found by bracket matching
//
// and skips <think>…</think>, where reasoning models draft calls they may not mean to make.
// A bare object counts as a call only when it has a name key and an arguments key (prose is full
// of braces and of data with a "name"); inside fences and <tool_call> a name alone is enough.
// Broken JSON is reported only when it looks like an attempted call (a name-like key).

const TOKEN = /[{\uff5b]|<(tool_call|tool|think)\s*>|```/gi;
/** Something like `"name":` or `tool：` — the text means to call something. */
const CALL_LIKE = /["'\u201c\u201d]?\b(?:name|tool|tool_name|function)\b["'\u201c\u201d]?\s*[:\uff1a]/;
/** Reads the name out of broken JSON, for the problem report. */
const NAME_IN_RAW = /["'\u201c\u201d]?\b(?:name|tool|tool_name|function)\b["'\u201c\u201d]?\s*[:\uff1a]\s*["'\u201c\u201d]([^"'\u201c\u201d\n]{1,100})/;
/** Each broken object's inside is searched for complete calls, this many levels deep at most (keeps hostile input linear). */
const MAX_RESCAN_DEPTH = 3;
const ARGS_OPEN = /^\s*<(args|arguments)\s*>/i;
const TAG_CLOSE: Readonly<Record<string, RegExp>> = {
  tool: /<\/tool\s*>/gi,
  tool_call: /<\/tool_call\s*>/gi,
  think: /<\/think\s*>/gi,
  args: /<\/args\s*>/gi,
  arguments: /<\/arguments\s*>/gi,
};

interface Closing {
  /** Where the closing tag starts (the content's end). */
  readonly at: number;
  /** Just past the closing tag. */
  readonly after: number;
}

/** The last search for each closing tag: searches only go forward, so a miss stays a miss (keeps `<tool><tool><tool>…` linear). */
type CloseCache = Map<string, { readonly from: number; readonly found: Closing | undefined }>;

function findClose(text: string, tag: string, from: number, end: number, cache: CloseCache): Closing | undefined {
  const last = cache.get(tag);
  let found: Closing | undefined;
  if (last !== undefined && last.from <= from && (last.found === undefined || last.found.at >= from)) {
    found = last.found;
  } else {
    const re = TAG_CLOSE[tag]!;
    re.lastIndex = from;
    const m = re.exec(text);
    found = m === null ? undefined : { at: m.index, after: m.index + m[0].length };
    cache.set(tag, { from, found });
  }
  return found === undefined || found.at >= end ? undefined : found;
}

function nameIn(raw: string): string | undefined {
  return NAME_IN_RAW.exec(raw)?.[1]?.trim();
}

/** Appends every call and problem in `text` to `sink`. */
export function parseText(text: string, sink: CallSink): void {
  scan(text, 0, text.length, false, 0, { sink, closes: new Map() });
}

interface Scan {
  readonly sink: CallSink;
  readonly closes: CloseCache;
}

/** Scans text[from, end); returns how many calls and problems it added. */
function scan(text: string, from: number, end: number, loose: boolean, depth: number, st: Scan): number {
  const { sink } = st;
  const before = sink.calls.length + sink.problems.length;
  const token = new RegExp(TOKEN.source, TOKEN.flags);
  let fenced = false;
  /** Set when the rest of the text has no name-like key: no bare object can be a call any more (tags still can). */
  let objectsDone = false;
  token.lastIndex = from;
  for (;;) {
    const m = token.exec(text);
    if (m === null || m.index >= end) break;
    const at = m.index;
    const tag = m[1]?.toLowerCase();
    let next: number;
    if (tag === undefined && m[0] === '```') {
      fenced = !fenced;
      next = at + 3;
    } else if (tag === undefined) {
      if (objectsDone) {
        next = at + 1;
      } else {
        const resume = scanObject(text, at, end, loose || fenced, depth, st);
        objectsDone = resume === undefined;
        next = resume ?? at + 1;
      }
    } else if (tag === 'think') {
      next = findClose(text, 'think', at, end, st.closes)?.after ?? end;
    } else if (tag === 'tool_call') {
      next = scanToolCallTag(text, at, at + m[0].length, end, depth, st);
    } else {
      next = scanToolTag(text, at, at + m[0].length, end, st);
    }
    token.lastIndex = Math.max(next, at + 1);
  }
  return sink.calls.length + sink.problems.length - before;
}

/**
 * A JSON object starting at `at`; returns where scanning resumes, or undefined when the object
 * never closes and nothing after `at` looks like a call (so that `{{{{…` stays linear).
 */
function scanObject(text: string, at: number, end: number, loose: boolean, depth: number, st: Scan): number | undefined {
  const { sink } = st;
  const close = matchBracket(text, at, end);
  if (close >= 0) {
    const raw = text.slice(at, close + 1);
    if (!CALL_LIKE.test(raw)) return close + 1;
    const parsed = parseLenientJson(raw);
    if (parsed.ok) {
      collectCalls(parsed.value, loose, sink);
      return close + 1;
    }
  }
  // Not found, or not JSON: with quotes of mixed kinds the walk may have paired the wrong ones.
  const alternative = matchBracket(text, at, end, true);
  if (alternative >= 0 && alternative !== close) {
    const raw = text.slice(at, alternative + 1);
    const parsed = CALL_LIKE.test(raw) ? parseLenientJson(raw) : undefined;
    if (parsed?.ok) {
      collectCalls(parsed.value, loose, sink);
      return alternative + 1;
    }
  }
  const stop = close >= 0 ? close : alternative;
  if (stop < 0) {
    const raw = text.slice(at, end);
    if (!CALL_LIKE.test(raw)) return undefined;
    // Unterminated (the output was cut off, or a quote is missing). Complete calls inside it
    // still count; only when there are none is the whole thing reported.
    const found = depth < MAX_RESCAN_DEPTH ? scan(text, at + 1, end, loose, depth + 1, st) : 0;
    if (found === 0) sink.problems.push(problem('unterminated JSON object: the text ends before its closing brace', raw, { name: nameIn(raw) }));
    return end;
  }
  const raw = text.slice(at, stop + 1);
  if (!CALL_LIKE.test(raw)) return stop + 1;
  const found = depth < MAX_RESCAN_DEPTH ? scan(text, at + 1, stop, loose, depth + 1, st) : 0;
  if (found === 0) {
    const parsed = parseLenientJson(raw);
    sink.problems.push(problem(`invalid JSON: ${parsed.ok ? 'unexpected text' : parsed.error}`, raw, { name: nameIn(raw) }));
  }
  return stop + 1;
}

/** `<tool_call>{…}</tool_call>`: the content is scanned loosely. */
function scanToolCallTag(text: string, at: number, contentStart: number, end: number, depth: number, st: Scan): number {
  const { sink } = st;
  const closing = findClose(text, 'tool_call', contentStart, end, st.closes);
  const contentEnd = closing?.at ?? end;
  const found = scan(text, contentStart, contentEnd, true, depth, st);
  const content = text.slice(contentStart, contentEnd).trim();
  if (found === 0 && content !== '') {
    const why = closing ? 'no JSON call inside <tool_call>…</tool_call>' : 'unterminated <tool_call> tag without a JSON call';
    sink.problems.push(problem(why, text.slice(at, closing?.after ?? end)));
  }
  return closing?.after ?? end;
}

/** `<tool>NAME</tool>` then optionally `<args>{…}</args>` (or a bare `{…}`). */
function scanToolTag(text: string, at: number, nameStart: number, end: number, st: Scan): number {
  const { sink } = st;
  const nameClose = findClose(text, 'tool', nameStart, end, st.closes);
  if (nameClose === undefined) {
    sink.problems.push(problem('unterminated <tool> tag', text.slice(at, Math.min(end, at + 200))));
    return nameStart;
  }
  const name = text.slice(nameStart, nameClose.at).trim();
  if (name === '' || /[\s<>{}"]/.test(name)) {
    sink.problems.push(problem(`<tool> tag without a usable tool name`, text.slice(at, nameClose.after)));
    return nameClose.after;
  }
  let argsText: string | undefined;
  let next = nameClose.after;
  const rest = text.slice(next, Math.min(end, next + 64));
  const open = ARGS_OPEN.exec(rest);
  if (open !== null) {
    const argsStart = next + open[0].length;
    const argsClose = findClose(text, open[1]!.toLowerCase(), argsStart, end, st.closes);
    if (argsClose !== undefined) {
      argsText = text.slice(argsStart, argsClose.at);
      next = argsClose.after;
    } else {
      // No closing tag: take the object that follows, if it is complete.
      const brace = text.indexOf('{', argsStart);
      const close = brace >= 0 && brace < end && text.slice(argsStart, brace).trim() === '' ? matchBracket(text, brace, end) : -1;
      if (close < 0) {
        sink.problems.push(problem(`call to '${name}': unterminated <args> tag`, text.slice(at, end), { name }));
        return end;
      }
      argsText = text.slice(brace, close + 1);
      next = close + 1;
    }
  } else if (/^\s*[{\uff5b]/.test(rest)) {
    const brace = next + rest.search(/[{\uff5b]/);
    const close = matchBracket(text, brace, end);
    if (close >= 0) {
      argsText = text.slice(brace, close + 1);
      next = close + 1;
    }
  }
  const args = toArguments(argsText);
  if (args.ok) sink.calls.push({ id: undefined, name, arguments: args.value });
  else sink.problems.push(problem(`call to '${name}': ${args.message}`, argsText ?? '', { name }));
  return next;
}
