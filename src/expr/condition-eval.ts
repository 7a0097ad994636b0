// Turns a parsed `when` into closures, once. Semantics:
// - A bare operand is tested for truthiness: false for undefined, null, false, 0, NaN and '';
//   true for everything else, empty arrays and objects included.
// - `==` / `!=`: deep equality of JSON values (json-equal.ts; a missing value equals null).
// - `<` `<=` `>` `>=`: only between two numbers or two strings (strings by UTF-16 code units);
//   any other pairing, a missing value included, is false, and so is its negation's operand
//   (`!($.n < 5)` is true when `$.n` is missing).
// - `a in b`: b an array → some element deep-equals a; b a string → a is a string inside it;
//   anything else → false.
// - `&&` / `||` short-circuit and give booleans; `!` gives the negated truthiness.

import type { Comparison, Expr } from './condition-parser.js';
import { jsonEqual } from './json-equal.js';
import type { Getter, RunContext } from './types.js';

export function truthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '' && !Number.isNaN(value);
}

export function compileTest(expr: Expr): (ctx: RunContext) => boolean {
  const value = compileExpr(expr);
  return (ctx) => truthy(value(ctx));
}

function compileExpr(expr: Expr): Getter {
  switch (expr.type) {
    case 'path':
      return expr.path.get;
    case 'literal': {
      const v = expr.value;
      return () => v;
    }
    case 'not': {
      const operand = compileExpr(expr.operand);
      return (ctx) => !truthy(operand(ctx));
    }
    case 'and': {
      const operands = expr.operands.map(compileExpr);
      return (ctx) => {
        for (const f of operands) if (!truthy(f(ctx))) return false;
        return true;
      };
    }
    case 'or': {
      const operands = expr.operands.map(compileExpr);
      return (ctx) => {
        for (const f of operands) if (truthy(f(ctx))) return true;
        return false;
      };
    }
    case 'compare': {
      const left = compileExpr(expr.left);
      const right = compileExpr(expr.right);
      const op = compare(expr.op);
      return (ctx) => op(left(ctx), right(ctx));
    }
  }
}

function compare(op: Comparison): (a: unknown, b: unknown) => boolean {
  switch (op) {
    case '==':
      return jsonEqual;
    case '!=':
      return (a, b) => !jsonEqual(a, b);
    case '<':
      return (a, b) => ordered(a, b) && (a as number) < (b as number);
    case '<=':
      return (a, b) => ordered(a, b) && (a as number) <= (b as number);
    case '>':
      return (a, b) => ordered(a, b) && (a as number) > (b as number);
    case '>=':
      return (a, b) => ordered(a, b) && (a as number) >= (b as number);
    case 'in':
      return contains;
  }
}

/** Both numbers or both strings: the only pairs `<` and friends compare. */
function ordered(a: unknown, b: unknown): boolean {
  const t = typeof a;
  return (t === 'number' || t === 'string') && typeof b === t;
}

function contains(needle: unknown, haystack: unknown): boolean {
  if (Array.isArray(haystack)) return haystack.some((element) => jsonEqual(element, needle));
  if (typeof haystack === 'string') return typeof needle === 'string' && haystack.includes(needle);
  return false;
}
