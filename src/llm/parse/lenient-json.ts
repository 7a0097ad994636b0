// JSON as models actually write it. JSON.parse first (the common case costs nothing extra);
// only when that fails is the text rewritten into strict JSON and parsed again. The rewrite is a
// single pass that knows whether it is inside a string, so it repairs what models get wrong
// around the values without touching the values themselves:
//
//   outside strings   full-width ｛ ｝ ［ ］ ： ， and the ideographic space become ASCII;
//                     “…” and ‘…’ / '…' delimit strings; unquoted keys are quoted;
//                     True / False / None become true / false / null; trailing commas and
//                     // or /* */ comments are dropped; a closing bracket that skips an open
//                     one (`{"a": {"b": 1}]`, one `}` short) gets the missing ones before it
//   inside strings    raw newlines and tabs are escaped; a backslash that starts no JSON escape
//                     (a regex's \d, a Windows path's \U) is kept as a literal backslash;
//                     a " inside a string that “ or ' opened is escaped
//
// Text inside a well-quoted string is never rewritten: `"他说：“你好，世界”"` keeps its
// full-width colon, comma and quotes. A second, looser pass (only when the first still fails)
// also lets a quote of the other kind close a string when a delimiter follows it, for models that
// open with " and close with ” — it can misread a quote inside a value, which is why it comes
// last. Nothing is evaluated: the result goes to JSON.parse.

export type JsonAttempt = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export function parseLenientJson(text: string): JsonAttempt {
  let first: string;
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    first = (error as Error).message;
  }
  const repaired = repairJson(text, false);
  if (repaired !== text) {
    try {
      return { ok: true, value: JSON.parse(repaired) as unknown };
    } catch {
      // fall through to the looser pass
    }
  }
  const loose = repairJson(text, true);
  if (loose !== repaired) {
    try {
      return { ok: true, value: JSON.parse(loose) as unknown };
    } catch {
      // report the first error: it points into the text as the model wrote it
    }
  }
  return { ok: false, error: first };
}

const enum Mode {
  Out,
  /** Opened by ". */
  Double,
  /** Opened by ' (closed by '). */
  Single,
  /** Opened by ‘ (closed by ’). */
  CurlySingle,
  /** Opened by “ „ ＂ (closed by ” “ ＂). */
  CurlyDouble,
}

const FULL_WIDTH: Readonly<Record<string, string>> = {
  '\uff5b': '{', // ｛
  '\uff5d': '}', // ｝
  '\uff3b': '[', // ［
  '\uff3d': ']', // ］
  '\uff1a': ':', // ：
  '\uff0c': ',', // ，
  '\u3000': ' ', // ideographic space
  '\u00a0': ' ', // no-break space
};

const CURLY_DOUBLE_OPEN = new Set(['\u201c', '\u201d', '\u201e', '\uff02']); // “ ” „ ＂
const CURLY_DOUBLE_CLOSE = new Set(['\u201d', '\u201c', '\uff02']);
const ANY_DOUBLE = new Set(['"', '\u201c', '\u201d', '\uff02']);
const ANY_SINGLE = new Set(["'", '\u2018', '\u2019']);
const CLOSERS_AFTER = new Set([':', ',', '}', ']', '\uff1a', '\uff0c', '\uff5d', '\uff3d']);
const JSON_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);
const WORDS: Readonly<Record<string, string>> = { True: 'true', False: 'false', None: 'null', true: 'true', false: 'false', null: 'null' };

function nextSignificant(text: string, from: number): string | undefined {
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t' && c !== '\u3000') return c;
  }
  return undefined;
}

/** A quote of the wrong kind closes the string (loose pass) when what follows is a delimiter or the end. */
function closesLoosely(text: string, i: number): boolean {
  const next = nextSignificant(text, i + 1);
  return next === undefined || CLOSERS_AFTER.has(next);
}

function isWordStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === '$';
}

function isWordPart(c: string): boolean {
  return isWordStart(c) || (c >= '0' && c <= '9');
}

function controlEscape(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

function closes(mode: Mode, c: string, text: string, i: number, loose: boolean): boolean {
  switch (mode) {
    case Mode.Double:
      return c === '"' || (loose && ANY_DOUBLE.has(c) && closesLoosely(text, i));
    case Mode.Single:
      return c === "'" || (loose && ANY_SINGLE.has(c) && closesLoosely(text, i));
    case Mode.CurlySingle:
      return c === '\u2019' || (loose && ANY_SINGLE.has(c) && closesLoosely(text, i));
    case Mode.CurlyDouble:
      return CURLY_DOUBLE_CLOSE.has(c) || (loose && c === '"' && closesLoosely(text, i));
    default:
      return false;
  }
}

/** Rewrites near-JSON into JSON; the result may still be invalid (JSON.parse decides). */
const CLOSER_OF: Readonly<Record<string, string>> = { '{': '}', '[': ']' };
const OPENER_OF: Readonly<Record<string, string>> = { '}': '{', ']': '[' };

export function repairJson(text: string, loose: boolean): string {
  let out = '';
  let mode = Mode.Out;
  let i = 0;
  const n = text.length;
  /** The brackets open outside strings, innermost last. */
  const open: string[] = [];
  while (i < n) {
    const c = text[i]!;
    if (mode !== Mode.Out) {
      if (c === '\\') {
        const next = text[i + 1];
        if (next === undefined) out += '\\\\';
        else if (next === "'") out += "'";
        else if (JSON_ESCAPES.has(next) && (next !== 'u' || /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))) out += `\\${next}`;
        else out += `\\\\${next < ' ' ? controlEscape(next) : next}`;
        i += 2;
        continue;
      }
      if (closes(mode, c, text, i, loose)) {
        out += '"';
        mode = Mode.Out;
      } else if (c === '"') {
        out += '\\"';
      } else if (c < ' ') {
        out += controlEscape(c);
      } else {
        out += c;
      }
      i++;
      continue;
    }
    // Outside strings.
    if (c === '"') {
      mode = Mode.Double;
      out += '"';
    } else if (c === "'") {
      mode = Mode.Single;
      out += '"';
    } else if (c === '\u2018') {
      mode = Mode.CurlySingle;
      out += '"';
    } else if (CURLY_DOUBLE_OPEN.has(c)) {
      mode = Mode.CurlyDouble;
      out += '"';
    } else if (c === ',' || c === '\uff0c') {
      const next = nextSignificant(text, i + 1);
      // A trailing comma before a closing bracket is dropped.
      if (next !== '}' && next !== ']' && next !== '\uff5d' && next !== '\uff3d') out += ',';
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end;
      continue;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    } else if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordPart(text[j]!)) j++;
      const word = text.slice(i, j);
      const next = nextSignificant(text, j);
      if (next === ':' || next === '\uff1a') out += `"${word}"`;
      else out += Object.hasOwn(WORDS, word) ? WORDS[word] : word;
      i = j;
      continue;
    } else {
      const ascii = Object.hasOwn(FULL_WIDTH, c) ? FULL_WIDTH[c]! : c;
      if (ascii === '{' || ascii === '[') open.push(ascii);
      else if (ascii === '}' || ascii === ']') {
        // Closes the innermost bracket it matches; the ones it skips are closed first.
        const at = open.lastIndexOf(OPENER_OF[ascii]!);
        if (at >= 0) {
          while (open.length > at + 1) out += CLOSER_OF[open.pop()!];
          open.pop();
        }
      }
      out += ascii;
    }
    i++;
  }
  return out;
}
