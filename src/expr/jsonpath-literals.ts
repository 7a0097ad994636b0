// The lexical pieces of an RFC 9535 JSONPath: quoted strings with their escapes, integers (for
// indexes and slices) within the exact range of a double, number literals in filters, and the
// member names that may follow a '.' without brackets.

import { codePoint, type Scanner } from './jsonpath-scanner.js';

/** The largest integer JSONPath allows, 2^53 − 1, and its negation. */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '/': '/', '\\': '\\' };
const ESCAPE_NAMES: Readonly<Record<number, string>> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r' };

/** Reads a quoted string at the scanner (on its opening quote) and returns it unescaped. */
export function readString(s: Scanner): string {
  const start = s.pos;
  const quote = s.peek();
  const other = quote === "'" ? '"' : "'";
  s.pos += 1;
  let value = '';
  for (;;) {
    if (s.done) s.fail(`unterminated string: expected a closing ${quote}`, start);
    const code = s.text.codePointAt(s.pos)!;
    const c = s.peek();
    if (c === quote) {
      s.pos += 1;
      return value;
    }
    if (c === '\\') {
      value += readEscape(s, quote, other);
      continue;
    }
    if (code < 0x20) {
      s.fail(`a control character (${codePoint(code)}) must be escaped in a string: write ${ESCAPE_NAMES[code] ?? `\\u${code.toString(16).padStart(4, '0')}`}`);
    }
    if (code >= 0xd800 && code <= 0xdfff) s.fail(`a lone surrogate (${codePoint(code)}) cannot appear in a string`);
    const ch = String.fromCodePoint(code);
    value += ch;
    s.pos += ch.length;
  }
}

function readEscape(s: Scanner, quote: string, other: string): string {
  const at = s.pos;
  const next = s.peek(1);
  if (next === quote) {
    s.pos += 2;
    return quote;
  }
  const simple = Object.hasOwn(SIMPLE_ESCAPES, next) ? SIMPLE_ESCAPES[next] : undefined;
  if (simple !== undefined) {
    s.pos += 2;
    return simple;
  }
  if (next === 'u') {
    const high = readHex4(s, at);
    if (high >= 0xdc00 && high <= 0xdfff) s.fail(`\\u${hex(high)} is the second half of a surrogate pair, with no first half before it`, at);
    if (high < 0xd800 || high > 0xdbff) return String.fromCharCode(high);
    if (!s.startsWith('\\u')) s.fail(`\\u${hex(high)} is the first half of a surrogate pair: a \\uDC00–\\uDFFF escape must follow`, at);
    const lowAt = s.pos;
    const low = readHex4(s, lowAt);
    if (low < 0xdc00 || low > 0xdfff) s.fail(`\\u${hex(high)} is the first half of a surrogate pair: a \\uDC00–\\uDFFF escape must follow, not \\u${hex(low)}`, lowAt);
    return String.fromCharCode(high, low);
  }
  if (next === other) {
    s.fail(`\\${other} is not an escape inside ${quote === "'" ? 'single' : 'double'} quotes: write ${other} as it is`, at);
  }
  s.fail(`unknown escape '\\${next}': a string may use \\b \\f \\n \\r \\t \\/ \\\\ \\uXXXX and \\${quote}`, at);
}

function readHex4(s: Scanner, at: number): number {
  const digits = s.text.slice(s.pos + 2, s.pos + 6);
  if (!/^[0-9A-Fa-f]{4}$/.test(digits)) s.fail('expected four hex digits after \\u', at);
  s.pos += 6;
  return Number.parseInt(digits, 16);
}

function hex(n: number): string {
  return n.toString(16).toUpperCase().padStart(4, '0');
}

const DIGITS = /[0-9]*/y;

/** An integer at the scanner (`0`, `-?[1-9][0-9]*`), in range; `what` names it for messages. */
export function readInt(s: Scanner, what: string): number {
  const start = s.pos;
  const negative = s.peek() === '-';
  DIGITS.lastIndex = start + (negative ? 1 : 0);
  const digits = DIGITS.exec(s.text)![0];
  if (digits === '') s.expected(`a digit after '-' in ${what}`, start + 1);
  s.pos = DIGITS.lastIndex;
  if (digits === '0' && negative) s.fail(`-0 is not allowed as ${what}: write 0`, start);
  if (digits.length > 1 && digits[0] === '0') s.fail(`${what} may not have leading zeros`, start);
  const value = Number(negative ? `-${digits}` : digits);
  if (Math.abs(value) > MAX_INTEGER) s.fail(`${what} ${negative ? '-' : ''}${digits} is out of range: JSONPath integers lie between -${MAX_INTEGER} and ${MAX_INTEGER}`, start);
  return value;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;

/** A number literal in a filter (JSON's number syntax; `-0` allowed). */
export function readNumber(s: Scanner): number {
  const start = s.pos;
  NUMBER.lastIndex = start;
  const m = NUMBER.exec(s.text);
  if (!m) return s.expected('a number', start);
  const end = NUMBER.lastIndex;
  const after = s.text[end] ?? '';
  if (/[0-9]/.test(after)) s.fail('a number may not have leading zeros', start);
  if (after === '.') s.expected('a digit after the decimal point', end + 1);
  if (after === 'e' || after === 'E') s.expected('a digit in the exponent', end + 1);
  s.pos = end;
  return Number(m[0]);
}

/** RFC name-first: a letter, '_', or any character from U+0080 on (surrogates excepted). */
export function isNameFirst(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || (code >= 0x80 && (code < 0xd800 || code > 0xdfff));
}

export function isNameChar(code: number): boolean {
  return isNameFirst(code) || (code >= 0x30 && code <= 0x39);
}

/** The member name after '.', or undefined when none starts at the scanner. */
export function readShorthandName(s: Scanner): string | undefined {
  const start = s.pos;
  let i = start;
  while (i < s.text.length) {
    const code = s.text.codePointAt(i)!;
    if (i === start ? !isNameFirst(code) : !isNameChar(code)) break;
    i += code > 0xffff ? 2 : 1;
  }
  if (i === start) return undefined;
  s.pos = i;
  return s.text.slice(start, i);
}
