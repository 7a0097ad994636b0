// Tokens of the `when` language. Hand-written: the language is small and its error
// messages should name the column and what was expected.
//
// `[`, `]` and `,` outside a path are the brackets and commas of a list literal (`['JP', 'FR']`).
// A JSONPath operand starts with `$` and runs to the first whitespace or operator character
// (`= ! < > & | ( )`) that is outside brackets and quotes, so `$.a[?(@.x > 1)]` and
// `$['a b']` are single tokens; whitespace followed by `.` or `[` (the next segment, which the
// RFC allows after blanks) continues the path.

import { ExprSyntaxError } from './syntax-error.js';

export type Operator = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||' | '!';

export type Token =
  | { readonly kind: 'path'; readonly text: string; readonly at: number }
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null; readonly at: number }
  | { readonly kind: 'op'; readonly op: Operator; readonly at: number }
  | { readonly kind: 'in' | '(' | ')' | '[' | ']' | ',' | 'end'; readonly at: number };

const OPERATOR_CHARS = '=!<>&|()';
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const TWO_CHAR: readonly Operator[] = ['==', '!=', '<=', '>=', '&&', '||'];

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (ch === '$') {
      const end = pathEnd(source, i);
      tokens.push({ kind: 'path', text: source.slice(i, end), at: i });
      i = end;
      continue;
    }
    if (ch === '(' || ch === ')' || ch === '[' || ch === ']' || ch === ',') {
      tokens.push({ kind: ch, at: i });
      i += 1;
      continue;
    }
    const two = source.slice(i, i + 2);
    if ((TWO_CHAR as readonly string[]).includes(two)) {
      tokens.push({ kind: 'op', op: two as Operator, at: i });
      i += 2;
      continue;
    }
    if (ch === '<' || ch === '>' || ch === '!') {
      tokens.push({ kind: 'op', op: ch, at: i });
      i += 1;
      continue;
    }
    if (ch === '=') throw new ExprSyntaxError("expected '==' (a single '=' is not an operator)", i);
    if (ch === '&') throw new ExprSyntaxError("expected '&&'", i);
    if (ch === '|') throw new ExprSyntaxError("expected '||'", i);
    if (ch === "'" || ch === '"') {
      const [value, end] = readString(source, i);
      tokens.push({ kind: 'literal', value, at: i });
      i = end;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(source);
    if (number) {
      tokens.push({ kind: 'literal', value: Number(number[0]), at: i });
      i += number[0].length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(source);
    if (word) {
      const w = word[0];
      if (w === 'true' || w === 'false') tokens.push({ kind: 'literal', value: w === 'true', at: i });
      else if (w === 'null') tokens.push({ kind: 'literal', value: null, at: i });
      else if (w === 'in') tokens.push({ kind: 'in', at: i });
      else {
        throw new ExprSyntaxError(
          `unknown word '${w}': expected a JSONPath ($…), a number, a quoted string, true, false, null or an operator`,
          i,
        );
      }
      i += w.length;
      continue;
    }
    throw new ExprSyntaxError(`unexpected character '${ch}'`, i);
  }
  tokens.push({ kind: 'end', at: source.length });
  return tokens;
}

/** Where a path token starting at `start` ends. Errors inside it are left to compilePath. */
function pathEnd(source: string, start: number): number {
  let depth = 0;
  let quote: string | undefined;
  let i = start;
  for (; i < source.length; i++) {
    const ch = source[i] as string;
    if (quote !== undefined) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '[') depth += 1;
    else if (ch === ']') depth -= 1;
    else if (depth <= 0 && /\s/.test(ch)) {
      // JSONPath allows blanks between segments (`$.a [0]`): the path goes on if one follows.
      let j = i;
      while (j < source.length && /\s/.test(source[j] as string)) j += 1;
      if (source[j] !== '.' && source[j] !== '[') break;
      i = j - 1;
    } else if (depth <= 0 && OPERATOR_CHARS.includes(ch)) break;
  }
  return i;
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '/': '/',
};

/** Reads a single- or double-quoted string with JSON-style escapes; returns it and its end. */
function readString(source: string, start: number): [string, number] {
  const quote = source[start];
  let value = '';
  let i = start + 1;
  while (i < source.length) {
    const ch = source[i] as string;
    if (ch === quote) return [value, i + 1];
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (next === 'u') {
        const hex = source.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new ExprSyntaxError('expected four hex digits after \\u', i);
        value += String.fromCharCode(Number.parseInt(hex, 16));
        i += 6;
        continue;
      }
      const escaped = Object.hasOwn(ESCAPES, next) ? ESCAPES[next] : undefined;
      if (escaped === undefined) throw new ExprSyntaxError(`unknown escape '\\${next}' in string`, i);
      value += escaped;
      i += 2;
      continue;
    }
    value += ch;
    i += 1;
  }
  throw new ExprSyntaxError(`unterminated string: expected a closing ${quote ?? ''}`, start);
}
