// Filter expressions turned into closures, and what the function extensions compute:
// - length(v): a string's length in Unicode code points, an array's elements, an object's
//   members; Nothing for anything else.
// - count(nodes): how many nodes.    value(nodes): the node's value when there is exactly one.
// - match(s, re) / search(s, re): the whole string / some part of it matches the I-Regexp `re`;
//   false when either is not a string or `re` is not a valid I-Regexp (iregexp.ts: linear time).

import type { Comparable, FunctionArg, FunctionCall, LogicalExpr, Query } from './jsonpath-ast.js';
import { isSingular } from './jsonpath-ast.js';
import { spend, type Budget } from './jsonpath-budget.js';
import { comparator } from './jsonpath-compare.js';
import { compileIRegexp, type RegexpTest } from './iregexp.js';

export type Test = (root: unknown, current: unknown, budget: Budget) => boolean;
type Value = (root: unknown, current: unknown, budget: Budget) => unknown;
type Nodes = (root: unknown, current: unknown, budget: Budget) => unknown[];

/** How queries inside a filter are compiled (jsonpath-eval.ts, passed in to keep the files apart). */
export interface QueryCompiler {
  readonly nodes: (query: Query) => Nodes;
  readonly singular: (query: Query) => Value;
}

export function compileTest(expr: LogicalExpr, q: QueryCompiler): Test {
  switch (expr.kind) {
    case 'or': {
      const tests = expr.operands.map((e) => compileTest(e, q));
      return (root, current, budget) => tests.some((t) => t(root, current, budget));
    }
    case 'and': {
      const tests = expr.operands.map((e) => compileTest(e, q));
      return (root, current, budget) => tests.every((t) => t(root, current, budget));
    }
    case 'not': {
      const test = compileTest(expr.operand, q);
      return (root, current, budget) => !test(root, current, budget);
    }
    case 'exists': {
      if (isSingular(expr.query)) {
        const value = q.singular(expr.query);
        return (root, current, budget) => value(root, current, budget) !== undefined;
      }
      const nodes = q.nodes(expr.query);
      return (root, current, budget) => nodes(root, current, budget).length > 0;
    }
    case 'call':
      return compileLogicalCall(expr.call, q);
    case 'compare': {
      const left = compileComparable(expr.left, q);
      const right = compileComparable(expr.right, q);
      const op = comparator(expr.op);
      return (root, current, budget) => op(left(root, current, budget), right(root, current, budget));
    }
  }
}

function compileComparable(c: Comparable, q: QueryCompiler): Value {
  switch (c.kind) {
    case 'literal': {
      const v = c.value;
      return () => v;
    }
    case 'query':
      return q.singular(c.query);
    case 'function':
      return compileValueCall(c.call, q);
  }
}

/** An argument where a value is expected: a literal, a singular query or a value function. */
function valueArg(arg: FunctionArg, q: QueryCompiler): Value {
  switch (arg.kind) {
    case 'literal': {
      const v = arg.value;
      return () => v;
    }
    case 'query':
      return q.singular(arg.query);
    case 'function':
      return compileValueCall(arg.call, q);
    case 'logical':
      throw new Error('a logical argument where a value was expected (checked at parse time)');
  }
}

function nodesArg(arg: FunctionArg, q: QueryCompiler): Nodes {
  if (arg.kind !== 'query') throw new Error('a nodes argument must be a query (checked at parse time)');
  return q.nodes(arg.query);
}

function compileValueCall(call: FunctionCall, q: QueryCompiler): Value {
  const [a] = call.args as [FunctionArg];
  switch (call.name) {
    case 'length': {
      const v = valueArg(a, q);
      return (root, current, budget) => lengthOf(v(root, current, budget));
    }
    case 'count': {
      const nodes = nodesArg(a, q);
      return (root, current, budget) => nodes(root, current, budget).length;
    }
    case 'value': {
      const nodes = nodesArg(a, q);
      return (root, current, budget) => {
        const found = nodes(root, current, budget);
        return found.length === 1 ? found[0] : undefined;
      };
    }
    default:
      throw new Error(`${call.name}() does not give a value (checked at parse time)`);
  }
}

function lengthOf(v: unknown): number | undefined {
  if (typeof v === 'string') {
    let n = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      // A high surrogate followed by a low one is a single code point.
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length) {
        const d = v.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i += 1;
      }
      n += 1;
    }
    return n;
  }
  if (Array.isArray(v)) return v.length;
  if (typeof v === 'object' && v !== null) return Object.keys(v).length;
  return undefined;
}

function compileLogicalCall(call: FunctionCall, q: QueryCompiler): Test {
  if (call.name !== 'match' && call.name !== 'search') throw new Error(`${call.name}() does not give a logical result (checked at parse time)`);
  const mode = call.name;
  const [a, b] = call.args as [FunctionArg, FunctionArg];
  const subject = valueArg(a, q);
  if (b.kind === 'literal') {
    // The usual case: the pattern is known now, so it is translated and compiled once.
    const test = typeof b.value === 'string' ? compileIRegexp(b.value, mode) : undefined;
    if (!test) return () => false;
    return (root, current, budget) => {
      const s = subject(root, current, budget);
      if (typeof s !== 'string') return false;
      spend(budget, 1 + (s.length >> 6));
      return test(s);
    };
  }
  const pattern = valueArg(b, q);
  // A pattern read from the document: compiled when met. The last one is kept, since a filter
  // usually meets the same pattern at every node; it depends on the pattern text alone.
  let last: { readonly pattern: string; readonly test: RegexpTest | undefined } | undefined;
  return (root, current, budget) => {
    const s = subject(root, current, budget);
    const p = pattern(root, current, budget);
    if (typeof s !== 'string' || typeof p !== 'string') return false;
    spend(budget, 1 + ((s.length + p.length) >> 6));
    if (last?.pattern !== p) last = { pattern: p, test: compileIRegexp(p, mode) };
    return last.test !== undefined && last.test(s);
  };
}
