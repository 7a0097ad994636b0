import { type Claim, type Found, type Span } from './format.js';
import type { KnownTools } from './known-tools.js';
import { parseLenientJson } from './lenient-json.js';
import { matchBracket } from './match-bracket.js';
import { addJsonCalls } from './json-calls.js';
import { echoesTemplate } from './not-a-call.js';

// Calls written as JSON objects in free text, found left to right by bracket matching:
//
//   ```json {…} ```                        fenced blocks (any language, or none)
//   {…}                                    a bare JSON object in prose
//
// A bare object counts as a call only when it has a name key and an arguments key (prose is full
// of braces and of data with a "name"); inside fences (and inside a format's own tags, `loose`) a
// name alone is enough. Broken JSON is reported only when it looks like an attempted call (a
// name-like key). Tokens are found with indexOf, not a regular expression: prose is the common
// case and must cost next to nothing.

/** Something like `"name":` or `tool：` — the text means to call something. */
const CALL_LIKE = /["'\u201c\u201d]?\b(?:name|tool|tool_name|function)\b["'\u201c\u201d]?\s*[:\uff1a]/;
/** Reads the name out of broken JSON, for the problem report. */
const NAME_IN_RAW = /["'\u201c\u201d]?\b(?:name|tool|tool_name|function)\b["'\u201c\u201d]?\s*[:\uff1a]\s*["'\u201c\u201d]([^"'\u201c\u201d\n]{1,100})/;
/** Each broken object's inside is searched for complete calls, this many levels deep at most (keeps hostile input linear). */
const MAX_RESCAN_DEPTH = 3;

/** Keys a call's name stands under, and keys its arguments stand under (`function` is either). */
export const NAME_WORDS: readonly string[] = ['name', 'tool', 'function'];
export const ARGS_WORDS: readonly string[] = ['arguments', 'args', 'parameters', 'input', 'function'];
/** How far before a colon its key, a quote and spaces may reach. */
const KEY_WINDOW = 14;

/** `\s` of a regular expression, without one. */
function isSpace(c: number): boolean {
  return (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

function isQuote(c: number): boolean {
  return c === 0x22 || c === 0x27 || c === 0x201c || c === 0x201d;
}

function endsWithWord(text: string, end: number, floor: number, words: readonly string[]): boolean {
  for (const word of words) if (end - word.length >= floor && text.startsWith(word, end - word.length)) return true;
  return false;
}

/** jsonKeys' bits: a name-like key, an arguments-like key (or a `tool_use` type) before a colon. */
export const NAME_KEY = 1;
export const ARGS_KEY = 2;

/**
 * The call-like key (NAME_KEY, ARGS_KEY) that stands right before the colon at `colon` (a word,
 * a quote, spaces), or 0. Read backwards character by character: the stream asks at every colon
 * of a message, and two regular expressions on a slice cost it several microseconds per message.
 */
export function keyBefore(text: string, colon: number): number {
  const floor = Math.max(0, colon - KEY_WINDOW);
  let end = colon;
  while (end > floor && isSpace(text.charCodeAt(end - 1))) end--;
  if (end > floor && isQuote(text.charCodeAt(end - 1))) end--;
  return (endsWithWord(text, end, floor, NAME_WORDS) ? NAME_KEY : 0) | (endsWithWord(text, end, floor, ARGS_WORDS) ? ARGS_KEY : 0);
}

/**
 * Which call-like keys stand before the colons of `text` at or after `from` (NAME_KEY, ARGS_KEY).
 * A JSON object in prose can be a call only when both do. Looks only at the few characters
 * before each colon, so prose (few colons) costs a couple of native searches.
 */
export function jsonKeys(text: string, from = 0): number {
  let keys = 0;
  const ascii = new NextToken(text, ':', from);
  const wide = new NextToken(text, '\uff1a', from);
  for (let pos = from; keys !== (NAME_KEY | ARGS_KEY); ) {
    const a = ascii.from(pos);
    const b = wide.from(pos);
    const at = a < 0 ? b : b < 0 ? a : Math.min(a, b);
    if (at < 0) break;
    keys |= keyBefore(text, at);
    pos = at + 1;
  }
  // `{"type": "tool_use", "name": …}` is a call without an arguments key.
  if ((keys & NAME_KEY) !== 0 && text.includes('tool_use', Math.max(0, from - 16))) keys |= ARGS_KEY;
  return keys;
}

export interface JsonScan {
  readonly text: string;
  readonly out: Found;
  readonly tools: KnownTools | undefined;
  readonly partial: boolean;
  /** Set while streaming, where an object or a fence is still open. */
  pending: number | undefined;
  /** Objects read as JSON that held no call (a definition, an envelope): no one may read inside them again. */
  readonly claims?: Claim[];
  /** The text starts inside a fence (a stream read on from past the objects it held so far). */
  readonly inside?: boolean;
}

function nameIn(raw: string): string | undefined {
  return NAME_IN_RAW.exec(raw)?.[1]?.trim();
}

/** Keys that make an object in prose a call rather than data with a name (`tool_use` and `"type": "function"` calls may have none). */
const ARGS_LIKE = /["'\u201c\u201d]?\b(?:arguments|args|parameters|input|function|tool_use)\b["'\u201c\u201d]?\s*[:\uff1a,}]/;

/** The next position of a token, searched again only once the scan has passed it: a token that is absent is searched for once, not once per object. */
class NextToken {
  private at: number;

  constructor(
    private readonly text: string,
    private readonly token: string,
    from: number,
  ) {
    this.at = text.indexOf(token, from);
  }

  from(pos: number): number {
    if (this.at >= 0 && this.at < pos) this.at = this.text.indexOf(this.token, pos);
    return this.at;
  }
}

/** Scans text[from, end); returns how many calls and problems it added. */
export function scanJson(st: JsonScan, from: number, end: number, loose: boolean, depth = 0): number {
  const { text, out } = st;
  const before = out.calls.length + out.problems.length;
  let fenced = st.inside === true && depth === 0;
  let fenceAt = fenced ? 0 : -1;
  /** Just past the last object read whole inside the open fence: a stream may read on from there. */
  let readTo = -1;
  /** Set when the rest of the text has no name-like key: no object can be a call any more. */
  let objectsDone = false;
  const ascii = new NextToken(text, '{', from);
  const wide = new NextToken(text, '\uff5b', from);
  const fences = new NextToken(text, '```', from);
  let pos = from;
  for (;;) {
    const a = ascii.from(pos);
    const b = wide.from(pos);
    const brace = a < 0 ? b : b < 0 ? a : Math.min(a, b);
    const fence = fences.from(pos);
    const at = fence >= 0 && (brace < 0 || fence < brace) ? fence : brace;
    if (at < 0 || at >= end) break;
    if (at === fence) {
      // A closed fence is one piece: streaming never resumes between its two ends.
      if (fenced && depth === 0) st.claims?.push({ start: fenceAt, end: at + 3, closed: true });
      fenced = !fenced;
      fenceAt = at;
      pos = at + 3;
    } else if (objectsDone) {
      pos = at + 1;
    } else {
      const resume = scanObject(st, at, end, loose || fenced, depth);
      if (resume === 'open') {
        // The fence around the open object must be seen again too, or its end would read as a start.
        if (fenced) st.pending = Math.min(st.pending ?? fenceAt, fenceAt);
        return out.calls.length + out.problems.length - before;
      }
      objectsDone = resume === undefined;
      pos = Math.max(resume ?? at + 1, at + 1);
      if (fenced && resume !== undefined) readTo = pos;
    }
  }
  // An open fence changes how what follows reads: while streaming, it is seen again, or claimed
  // open with the place past its objects, from which the text is read again as inside a fence.
  // At the end, a fence never closed that held objects (or that a stream read on from inside) is
  // code to the end of the text: claimed, so the content leaves it out with its calls.
  if (fenced && depth === 0) {
    if (!st.partial) {
      if (st.claims !== undefined && (readTo > fenceAt || (st.inside === true && fenceAt === 0))) st.claims.push({ start: fenceAt, end });
    } else if (readTo > fenceAt && st.claims !== undefined) st.claims.push({ start: fenceAt, end, resume: readTo });
    else st.pending = Math.min(st.pending ?? fenceAt, fenceAt);
  }
  return out.calls.length + out.problems.length - before;
}

/**
 * A JSON object starting at `at`; returns where scanning resumes, undefined when the object never
 * closes and nothing after `at` looks like a call (so that `{{{{…` stays linear), or 'open' when
 * streaming and the object may still close.
 */
function scanObject(st: JsonScan, at: number, end: number, loose: boolean, depth: number): number | undefined | 'open' {
  const { text, out, tools } = st;
  const close = matchBracket(text, at, end);
  if (close >= 0) {
    const raw = text.slice(at, close + 1);
    // In prose, data with a name (`{"name": "Alice", "age": 31}`) is not worth parsing.
    if (!CALL_LIKE.test(raw) || (!loose && !ARGS_LIKE.test(raw))) return close + 1;
    const parsed = parseLenientJson(raw);
    if (parsed.ok) {
      if (addJsonCalls(parsed.value, loose, { start: at, end: close + 1 }, tools, out) > 0) st.claims?.push({ start: at, end: close + 1, closed: true });
      return close + 1;
    }
  }
  // Not found, or not JSON: with quotes of mixed kinds the walk may have paired the wrong ones.
  const alternative = matchBracket(text, at, end, true);
  if (alternative >= 0 && alternative !== close) {
    const raw = text.slice(at, alternative + 1);
    const parsed = CALL_LIKE.test(raw) ? parseLenientJson(raw) : undefined;
    if (parsed?.ok) {
      if (addJsonCalls(parsed.value, loose, { start: at, end: alternative + 1 }, tools, out) > 0) st.claims?.push({ start: at, end: alternative + 1, closed: true });
      return alternative + 1;
    }
  }
  if (close < 0 && st.partial && depth === 0) {
    st.pending = Math.min(st.pending ?? at, at);
    return 'open';
  }
  const stop = close >= 0 ? close : alternative;
  if (stop < 0) {
    const raw = text.slice(at, end);
    if (!CALL_LIKE.test(raw)) return undefined;
    // Unterminated (the output was cut off, or a quote is missing). Complete calls inside it
    // still count; only when there are none is the whole thing reported.
    const found = depth < MAX_RESCAN_DEPTH ? scanJson(st, at + 1, end, loose, depth + 1) : 0;
    if (found === 0 && !echoesTemplate(raw)) {
      out.problems.push({ start: at, end, message: 'unterminated JSON object: the text ends before its closing brace', ...named(raw) });
    }
    return end;
  }
  const raw = text.slice(at, stop + 1);
  if (!CALL_LIKE.test(raw)) return stop + 1;
  const found = depth < MAX_RESCAN_DEPTH ? scanJson(st, at + 1, stop, loose, depth + 1) : 0;
  if (found === 0 && !echoesTemplate(raw)) {
    const parsed = parseLenientJson(raw);
    out.problems.push({ start: at, end: stop + 1, message: `invalid JSON: ${parsed.ok ? 'unexpected text' : parsed.error}`, ...named(raw) });
  }
  return stop + 1;
}

function named(raw: string): { name?: string } {
  const name = nameIn(raw);
  return name === undefined ? {} : { name };
}
