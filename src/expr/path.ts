// compilePath: a JSONPath (RFC 9535) → a getter, decided once. Simple paths (names and indexes)
// become direct property access (path-simple.ts); every other path is compiled into closures
// over its parsed query (jsonpath-eval.ts).
//
// Results: a simple path gives the value, or undefined when it selects nothing; any other path
// (wildcard, filter, slice, union, recursive descent) gives the array of the values it selects,
// possibly empty.

import { plainRoot } from './context.js';
import { newBudget } from './jsonpath-budget.js';
import { compileNodes } from './jsonpath-eval.js';
import { parsePath } from './path-parse.js';
import { simpleGetter, type Key } from './path-simple.js';
import type { CompiledPath, Getter } from './types.js';

/** Compiles a path; throws ExprSyntaxError (with the offset) when it is not valid. */
export function compilePath(source: string): CompiledPath {
  const parsed = parsePath(source);
  const { root } = parsed;
  const filterRoots = Object.freeze(parsed.filterRoots);
  if (parsed.simple) {
    const keys: Key[] = parsed.query.segments.map((s) => {
      const selector = s.selectors[0]!;
      return selector.kind === 'name' ? selector.name : selector.kind === 'index' ? selector.index : '';
    });
    return Object.freeze({ source, root, filterRoots, simple: true, multi: false, get: simpleGetter(keys) });
  }
  const nodes = compileNodes(parsed.query);
  // The general evaluator reads own members only, so a layered for_each context is flattened.
  const get: Getter = (ctx) => {
    const root = plainRoot(ctx);
    return nodes(root, root, newBudget());
  };
  return Object.freeze({ source, root, filterRoots, simple: false, multi: true, get });
}
