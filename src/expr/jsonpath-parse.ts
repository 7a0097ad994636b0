// RFC 9535 JSONPath, parsed by hand so that every refusal names its offset and what the RFC
// expects there (and, for the forms other JSONPath dialects taught people, the RFC form to write
// instead: jsonpath-habits.ts). This file reads queries, segments and selectors; filter
// expressions are read by jsonpath-parse-filter.ts.
//
//   query     = ("$" | "@") *(S segment)              S: spaces, tabs, line breaks
//   segment   = "." (name | "*") | ".." (name | "*" | bracketed) | bracketed
//   bracketed = "[" S selector *(S "," S selector) S "]"
//   selector  = 'name' | "name" | "*" | int | [int S] ":" S [int S] [":" [S int]] | "?" S filter

import type { Query, Segment, Selector } from './jsonpath-ast.js';
import { parseFilter } from './jsonpath-parse-filter.js';
import { afterOperandHabit, bracketHabit, shorthandHabit, trailingHabit } from './jsonpath-habits.js';
import { readInt, readShorthandName, readString } from './jsonpath-literals.js';
import { describeAt, isBlank, Scanner } from './jsonpath-scanner.js';

/** Parses a whole path; throws ExprSyntaxError at the first problem. */
export function parseQuery(text: string): Query {
  const s = new Scanner(text);
  if (s.peek() !== '$') {
    const lead = isBlank(s.peek()) ? ' (no blanks before it)' : '';
    return s.expected(`'$' at the start of a JSONPath${lead}`, 0);
  }
  const query = readQuery(s);
  if (!s.done) {
    const at = s.pos;
    s.skipBlank();
    if (s.done) s.fail('a JSONPath may not end with blanks', at);
    s.pos = at;
    s.fail(trailingHabit(text, at) ?? `expected '.', '..' or '[' (the next segment) or the end of the path, found ${describeAt(text, at)}`, at);
  }
  return query;
}

/** A query at the scanner, which is on its `$` or `@`. */
export function readQuery(s: Scanner): Query {
  const at = s.pos;
  const origin = s.peek() === '@' ? '@' : '$';
  s.pos += 1;
  const segments: Segment[] = [];
  for (;;) {
    const before = s.pos;
    s.skipBlank();
    const c = s.peek();
    const segmentAt = s.pos;
    if (c === '.') segments.push(readDotted(s));
    else if (c === '[') segments.push({ descendant: false, selectors: readBracketed(s), at: segmentAt });
    else {
      s.pos = before;
      break;
    }
  }
  return { origin, segments, at };
}

/** `.name`, `.*`, `..name`, `..*`, `..[…]`. */
function readDotted(s: Scanner): Segment {
  const at = s.pos;
  const descendant = s.peek(1) === '.';
  s.pos += descendant ? 2 : 1;
  if (descendant && s.peek() === '[') return { descendant, selectors: readBracketed(s), at };
  if (s.peek() === '*') {
    s.pos += 1;
    return { descendant, selectors: [{ kind: 'wildcard', at: s.pos - 1 }], at };
  }
  const nameAt = s.pos;
  const name = readShorthandName(s);
  if (name === undefined) {
    const what = descendant ? "a member name, '*' or '[' after '..'" : "a member name or '*' after '.'";
    s.fail(shorthandHabit(s.text, nameAt) ?? `expected ${what}, found ${describeAt(s.text, nameAt)}`, nameAt);
  }
  return { descendant, selectors: [{ kind: 'name', name, at: nameAt }], at };
}

/** `[ selector, … ]`, the scanner on the `[`; returns the selectors. */
function readBracketed(s: Scanner): Selector[] {
  const open = s.pos;
  s.pos += 1;
  const selectors: Selector[] = [];
  for (;;) {
    s.skipBlank();
    const selector = readSelector(s, selectors.length === 0 ? undefined : "a selector after ','");
    selectors.push(selector);
    s.skipBlank();
    const c = s.peek();
    if (c === ',') {
      s.pos += 1;
      continue;
    }
    if (c === ']') {
      s.pos += 1;
      return selectors;
    }
    if (s.done) s.fail(`unclosed '[': expected ',' or ']'`, s.pos);
    const habit = selector.kind === 'filter' ? afterOperandHabit(s.text, s.pos) : undefined;
    const what = selector.kind === 'filter' ? "'&&', '||', a comparison, ',' or ']'" : "',' or ']'";
    s.fail(habit ?? `expected ${what}, found ${describeAt(s.text, s.pos)}`, s.pos);
  }
}

function readSelector(s: Scanner, afterComma: string | undefined): Selector {
  const at = s.pos;
  const c = s.peek();
  if (c === "'" || c === '"') return { kind: 'name', name: readString(s), at };
  if (c === '*') {
    s.pos += 1;
    return { kind: 'wildcard', at };
  }
  if (c === '?') {
    s.pos += 1;
    s.skipBlank();
    s.enter(at);
    const expr = parseFilter(s, readQuery);
    s.leave();
    return { kind: 'filter', expr, at };
  }
  if (c === '-' || c === ':' || (c >= '0' && c <= '9')) return readIndexOrSlice(s);
  if (s.done) s.fail("unclosed '[': expected a selector and ']', found the end of the path");
  const expected = afterComma ?? "a selector (a quoted name, an index, a slice, '*' or a filter '?…') after '['";
  return s.fail(bracketHabit(s.text, at) ?? `expected ${expected}, found ${describeAt(s.text, at)}`, at);
}

function readIndexOrSlice(s: Scanner): Selector {
  const at = s.pos;
  const start = s.peek() === ':' ? undefined : readInt(s, 'an index');
  const afterStart = s.pos;
  s.skipBlank();
  if (s.peek() !== ':') {
    s.pos = afterStart;
    return { kind: 'index', index: start!, at };
  }
  s.pos += 1;
  s.skipBlank();
  const end = startsInt(s) ? readInt(s, 'the end of a slice') : undefined;
  const afterEnd = s.pos;
  s.skipBlank();
  let step: number | undefined;
  if (s.peek() === ':') {
    s.pos += 1;
    s.skipBlank();
    step = startsInt(s) ? readInt(s, 'the step of a slice') : undefined;
  } else s.pos = afterEnd;
  return {
    kind: 'slice',
    at,
    ...(start !== undefined ? { start } : {}),
    ...(end !== undefined ? { end } : {}),
    ...(step !== undefined ? { step } : {}),
  };
}

function startsInt(s: Scanner): boolean {
  const c = s.peek();
  return c === '-' || (c >= '0' && c <= '9');
}
