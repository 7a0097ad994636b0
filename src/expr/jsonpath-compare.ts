// Comparison in JSONPath filters, as RFC 9535 defines it. `undefined` stands for Nothing (a
// singular query that selected no node, or a function that gave no value):
// - `==`: Nothing equals only Nothing; numbers by value; strings, booleans and null exactly;
//   arrays element by element; objects by the same members with equal values. No conversions:
//   1 == '1' is false, and a missing member is not null.
// - `<`: two numbers, or two strings in Unicode code point order; anything else is false, and
//   so is `<=` unless the two are equal. `>` and `>=` are the same with the sides swapped.

import type { ComparisonOp } from './jsonpath-ast.js';
import { jsonEqual } from './json-equal.js';

export function equal(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  return jsonEqual(a, b);
}

function less(a: unknown, b: unknown): boolean {
  if (typeof a === 'number') return typeof b === 'number' && a < b;
  return typeof a === 'string' && typeof b === 'string' && codePointLess(a, b);
}

/** `a < b` by code points, where JavaScript's `<` compares UTF-16 units. */
function codePointLess(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    // A surrogate stands for a code point above U+FFFF, so it sorts after every other unit.
    return sx === sy ? x < y : sy;
  }
  return a.length < b.length;
}

export function comparator(op: ComparisonOp): (a: unknown, b: unknown) => boolean {
  switch (op) {
    case '==':
      return equal;
    case '!=':
      return (a, b) => !equal(a, b);
    case '<':
      return less;
    case '<=':
      return (a, b) => less(a, b) || equal(a, b);
    case '>':
      return (a, b) => less(b, a);
    case '>=':
      return (a, b) => less(b, a) || equal(a, b);
  }
}
