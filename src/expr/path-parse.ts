// A strict scanner for the JSONPath subset chains may use. jsonpath-plus' own tokenizer
// (`JSONPath.toPathArray`) accepts almost anything (`$.a[` is fine to it), so the syntax is
// checked here, with the offset of the first problem, before anything is handed to it.
//
// Accepted, after the leading `$`:
//   .name  ..name  .*  ..*  ..[…]          name: letters, digits, `_`, `$`, `-`
//   ['name']  ["name"]                      escapes: \' \" \\
//   ['a','b']                               union of names
//   [0]  [-1]                               index; negative counts from the end of an array
//   [1,2]                                   union of indexes (not negative)
//   [start:end]  [start:end:step]           slice
//   [*]                                     wildcard
//   [?(…)]                                  filter, run by jsonpath-plus' safe evaluator
// Rejected: script expressions `[(…)]`, the parent `^` and property-name `~` operators, and
// type selectors `@string()`: nothing in the spec needs them and each widens what a chain file
// can make jsonpath-plus do.

import { FORBIDDEN_MEMBERS } from './forbidden.js';
import { ExprSyntaxError } from './syntax-error.js';

export type Segment =
  | { readonly kind: 'member'; readonly name: string; readonly at: number }
  | { readonly kind: 'index'; readonly index: number; readonly at: number }
  | { readonly kind: 'wildcard'; readonly at: number }
  | { readonly kind: 'descent'; readonly at: number }
  | { readonly kind: 'slice'; readonly text: string; readonly at: number }
  | { readonly kind: 'names'; readonly names: readonly string[]; readonly at: number }
  | { readonly kind: 'indexes'; readonly indexes: readonly number[]; readonly at: number }
  | { readonly kind: 'filter'; readonly script: string; readonly at: number; readonly scriptAt: number };

export interface ParsedPath {
  readonly segments: readonly Segment[];
  /** Only members and indexes: compiled to direct property access. */
  readonly simple: boolean;
  /** Can match many nodes: the result is an array of matches. */
  readonly multi: boolean;
  readonly root: string | undefined;
}

const NAME = /[\p{L}\p{N}\p{M}_$-]+/uy;
const INDEX = /^-?\d+$/;
const SLICE = /^-?\d*:-?\d*(?::-?\d*)?$/;
const INDEX_UNION = /^\d+(?:,\d+)+$/;

export function parsePath(source: string): ParsedPath {
  if (source[0] !== '$') throw new ExprSyntaxError("a JSONPath must start with '$'", 0);
  const segments: Segment[] = [];
  let i = 1;
  while (i < source.length) {
    const c = source[i];
    if (c === '.') {
      if (source[i + 1] === '.') {
        segments.push({ kind: 'descent', at: i });
        i += 2;
        // `..` must be followed by what it looks for; a bracket is read by the next turn.
        if (source[i] === '[') continue;
      } else {
        i += 1;
      }
      if (source[i] === '*') {
        segments.push({ kind: 'wildcard', at: i });
        i += 1;
        continue;
      }
      NAME.lastIndex = i;
      const m = NAME.exec(source);
      if (!m) throw new ExprSyntaxError(`expected a member name after '.'${describeAt(source, i)}`, i);
      checkName(m[0], i);
      segments.push({ kind: 'member', name: m[0], at: i });
      i += m[0].length;
      continue;
    }
    if (c === '[') {
      i = parseBracket(source, i, segments);
      continue;
    }
    throw new ExprSyntaxError(`unexpected '${c ?? ''}': expected '.' or '['`, i);
  }
  return classify(segments);
}

function describeAt(source: string, i: number): string {
  return i >= source.length ? ' but the path ended' : `, found '${source[i] ?? ''}'`;
}

function checkName(name: string, at: number): void {
  if (FORBIDDEN_MEMBERS.has(name)) {
    throw new ExprSyntaxError(`the member name '${name}' is not allowed in a path`, at);
  }
}

/** Reads one `[…]` starting at `open`; returns the offset just past the `]`. */
function parseBracket(source: string, open: number, out: Segment[]): number {
  let i = open + 1;
  const c = source[i];
  if (c === "'" || c === '"') {
    const names: string[] = [];
    for (;;) {
      i = skipSpace(source, i);
      const q = source[i];
      if (q !== "'" && q !== '"') throw new ExprSyntaxError(`expected a quoted name${describeAt(source, i)}`, i);
      const [name, end] = readQuoted(source, i);
      checkName(name, i);
      names.push(name);
      i = skipSpace(source, end);
      if (source[i] === ',') {
        i += 1;
        continue;
      }
      if (source[i] === ']') break;
      throw new ExprSyntaxError(`expected ',' or ']'${describeAt(source, i)}`, i);
    }
    const first = names[0] as string; // the loop above pushes before it can break
    out.push(names.length === 1 ? { kind: 'member', name: first, at: open } : { kind: 'names', names, at: open });
    return i + 1;
  }
  if (c === '*') {
    expectClose(source, i + 1);
    out.push({ kind: 'wildcard', at: open });
    return i + 2;
  }
  if (c === '?') {
    if (source[i + 1] !== '(') throw new ExprSyntaxError("expected '(' after '[?'", i + 1);
    const scriptAt = i + 2;
    const close = findFilterEnd(source, i + 1);
    const script = source.slice(scriptAt, close);
    if (script.trim() === '') throw new ExprSyntaxError('empty filter expression', scriptAt);
    expectClose(source, close + 1);
    out.push({ kind: 'filter', script, at: open, scriptAt });
    return close + 2;
  }
  if (c === '(') {
    throw new ExprSyntaxError('script expressions [(…)] are not supported; use an index such as [-1] or a filter [?(…)]', i);
  }
  let end = i;
  while (end < source.length && /[-\d:,]/.test(source[end] as string)) end += 1;
  const text = source.slice(i, end);
  if (text === '') {
    throw new ExprSyntaxError(`expected a quoted name, an index, a slice, '*' or a filter after '['${describeAt(source, i)}`, i);
  }
  expectClose(source, end);
  if (INDEX.test(text)) {
    const index = Number(text);
    if (!Number.isSafeInteger(index)) throw new ExprSyntaxError(`index ${text} is too large`, i);
    out.push({ kind: 'index', index, at: open });
  } else if (SLICE.test(text)) {
    out.push({ kind: 'slice', text, at: open });
  } else if (INDEX_UNION.test(text)) {
    const indexes = text.split(',').map(Number);
    if (!indexes.every(Number.isSafeInteger)) throw new ExprSyntaxError('index too large in union', i);
    out.push({ kind: 'indexes', indexes, at: open });
  } else {
    throw new ExprSyntaxError(`'${text}' is not an index, a slice or a union of indexes (negative indexes are not allowed in unions)`, i);
  }
  return end + 1;
}

function skipSpace(source: string, i: number): number {
  while (source[i] === ' ' || source[i] === '\t') i += 1;
  return i;
}

function expectClose(source: string, i: number): void {
  if (source[i] !== ']') throw new ExprSyntaxError(`expected ']'${describeAt(source, i)}`, i);
}

/** Reads a quoted name at `start`; returns it unescaped and the offset past the closing quote. */
export function readQuoted(source: string, start: number): [string, number] {
  const quote = source[start];
  let value = '';
  let i = start + 1;
  while (i < source.length) {
    const ch = source[i] as string;
    if (ch === quote) return [value, i + 1];
    if (ch === '\\') {
      const next = source[i + 1];
      if (next !== "'" && next !== '"' && next !== '\\') {
        throw new ExprSyntaxError("unsupported escape in a quoted name (only \\' \\\" and \\\\)", i);
      }
      value += next;
      i += 2;
      continue;
    }
    value += ch;
    i += 1;
  }
  throw new ExprSyntaxError('unterminated quoted name', start);
}

/**
 * Finds the `)` that closes the filter whose `(` is at `open`, skipping quoted strings and
 * balancing nested parentheses and brackets (`@.tags[0]`, nested filters).
 */
function findFilterEnd(source: string, open: number): number {
  let depth = 0;
  let i = open;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "'" || ch === '"') {
      i = skipString(source, i);
      continue;
    }
    if (ch === '(' || ch === '[') depth += 1;
    else if (ch === ')' || ch === ']') {
      depth -= 1;
      if (depth === 0) {
        if (ch !== ')') throw new ExprSyntaxError("unbalanced ']' in filter", i);
        return i;
      }
    }
    i += 1;
  }
  throw new ExprSyntaxError("unclosed filter: expected ')]'", open - 2);
}

function skipString(source: string, start: number): number {
  const quote = source[start];
  let i = start + 1;
  while (i < source.length) {
    const ch = source[i];
    if (ch === '\\') i += 2;
    else if (ch === quote) return i + 1;
    else i += 1;
  }
  throw new ExprSyntaxError('unterminated string in filter', start);
}

function classify(segments: readonly Segment[]): ParsedPath {
  let simple = true;
  let multi = false;
  for (const s of segments) {
    if (s.kind !== 'member' && s.kind !== 'index') {
      simple = false;
      multi = true;
    }
  }
  const first = segments[0];
  let root: string | undefined;
  if (first?.kind === 'member') root = first.name;
  else if (first?.kind === 'index' && first.index >= 0) root = String(first.index);
  return { segments, simple, multi, root };
}
