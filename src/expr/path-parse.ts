// A path's text → its parsed query and the facts the compiler needs about it, decided once:
// whether it is simple (names and indexes only: compiled to direct property access, and yields
// one value), which root member it reads (for the DAG), and which root members the absolute
// queries inside its filters read (`$.items[?@.id == $.pick.id]` reads `pick` too).
// Member names that reach JavaScript's object machinery (`__proto__`, `constructor`,
// `prototype`) are refused anywhere in a path: they name no data a chain should read.

import type { FunctionArg, LogicalExpr, Query, Selector } from './jsonpath-ast.js';
import { isSingular } from './jsonpath-ast.js';
import { parseQuery } from './jsonpath-parse.js';
import { FORBIDDEN_KEYS } from '../common/forbidden-keys.js';
import { ExprSyntaxError } from './syntax-error.js';

export interface ParsedPath {
  readonly query: Query;
  /** Names and indexes only (RFC 9535's singular query): at most one node. */
  readonly simple: boolean;
  /** Can select many nodes (wildcard, filter, slice, recursive descent, union): the result is an array. */
  readonly multi: boolean;
  /** The root member the path starts with; undefined for `$`, `$.*`, `$..x`, `$['a','b']`. */
  readonly root: string | undefined;
  /** The root members read by absolute queries inside filters (undefined: any member). */
  readonly filterRoots: readonly (string | undefined)[];
}

/** Throws ExprSyntaxError (with the offset) when the path is not valid. */
export function parsePath(source: string): ParsedPath {
  const query = parseQuery(source);
  const filterRoots: (string | undefined)[] = [];
  visitQuery(query, filterRoots, false);
  const simple = isSingular(query);
  return { query, simple, multi: !simple, root: rootOf(query), filterRoots };
}

function rootOf(query: Query): string | undefined {
  const first = query.segments[0];
  const selector = first?.selectors.length === 1 && !first.descendant ? first.selectors[0] : undefined;
  return selector?.kind === 'name' ? selector.name : undefined;
}

function visitQuery(query: Query, roots: (string | undefined)[], inFilter: boolean): void {
  if (inFilter && query.origin === '$') roots.push(rootOf(query));
  for (const segment of query.segments) for (const selector of segment.selectors) visitSelector(selector, roots);
}

function visitSelector(selector: Selector, roots: (string | undefined)[]): void {
  if (selector.kind === 'name' && FORBIDDEN_KEYS.has(selector.name)) {
    throw new ExprSyntaxError(`the member name '${selector.name}' is not allowed in a path (it names JavaScript's object machinery, not data)`, selector.at);
  }
  if (selector.kind === 'filter') visitExpr(selector.expr, roots);
}

function visitExpr(expr: LogicalExpr, roots: (string | undefined)[]): void {
  switch (expr.kind) {
    case 'or':
    case 'and':
      for (const e of expr.operands) visitExpr(e, roots);
      return;
    case 'not':
      return visitExpr(expr.operand, roots);
    case 'exists':
      return visitQuery(expr.query, roots, true);
    case 'call':
      return visitCall(expr.call.args, roots);
    case 'compare':
      for (const side of [expr.left, expr.right]) {
        if (side.kind === 'query') visitQuery(side.query, roots, true);
        else if (side.kind === 'function') visitCall(side.call.args, roots);
      }
  }
}

function visitCall(args: readonly FunctionArg[], roots: (string | undefined)[]): void {
  for (const arg of args) {
    if (arg.kind === 'query') visitQuery(arg.query, roots, true);
    else if (arg.kind === 'logical') visitExpr(arg.expr, roots);
    else if (arg.kind === 'function') visitCall(arg.call.args, roots);
  }
}
