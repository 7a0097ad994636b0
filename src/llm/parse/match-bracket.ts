// Where does the JSON object that starts here end? Counting braces is not enough: a brace inside
// a string (`"query": "SELECT '}'"`) or after an escaped quote (`"say \"}\""`) is text. So the
// walk knows when it is inside a string, opened by " (closed by an unescaped ") or by “ (closed by
// ” or “), and counts full-width ｛ ｝ as braces, since models that write one write the other.
// When that walk runs off the end, `anyQuote` walks again letting any double quote (" “ ” ＂)
// open or close a string, for models that mix them (`{"city”: "北京"}`); the looser JSON repair
// then has a chance to read what it finds.
// A regular expression cannot do this (`\{.*\}` is greedy and swallows everything between two
// calls; `\{.*?\}` stops at the first nested brace).

export const QUOTE = 0x22; // "
export const BACKSLASH = 0x5c;
export const OPEN = 0x7b; // {
export const CLOSE = 0x7d; // }
export const OPEN_WIDE = 0xff5b; // ｛
export const CLOSE_WIDE = 0xff5d; // ｝
export const CURLY_OPEN = 0x201c; // “
export const CURLY_CLOSE = 0x201d; // ”

const WIDE_QUOTE = 0xff02; // ＂

/** Index of the brace that closes the one at `start`, or -1 when `end` comes first. */
export function matchBracket(text: string, start: number, end: number = text.length, anyQuote = false): number {
  let depth = 0;
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (anyQuote && (c === QUOTE || c === CURLY_OPEN || c === CURLY_CLOSE || c === WIDE_QUOTE)) {
      i = endOfAnyQuote(text, i + 1, end);
      if (i < 0) return -1;
    } else if (c === QUOTE) {
      i = endOfString(text, i + 1, end);
      if (i < 0) return -1;
    } else if (c === CURLY_OPEN || c === CURLY_CLOSE) {
      i = endOfCurlyString(text, i + 1, end);
      if (i < 0) return -1;
    } else if (c === OPEN || c === OPEN_WIDE) {
      depth++;
    } else if (c === CLOSE || c === CLOSE_WIDE) {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

/** Index of the quote that ends a "string" whose text starts at `from`; -1 when unterminated. */
function endOfString(text: string, from: number, end: number): number {
  let i = from;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0 || q >= end) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let slashes = 0;
    for (let k = q - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q;
    i = q + 1;
  }
}

function endOfCurlyString(text: string, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === CURLY_CLOSE || c === CURLY_OPEN) return i;
  }
  return -1;
}

function endOfAnyQuote(text: string, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE || c === CURLY_OPEN || c === CURLY_CLOSE || c === WIDE_QUOTE) return i;
  }
  return -1;
}
