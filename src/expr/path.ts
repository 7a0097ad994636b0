// compilePath: a JSONPath source → a getter, decided once. Simple paths become direct property
// access (path-simple.ts); everything else goes through jsonpath-plus (path-complex.ts).
//
// Results: a single-valued path gives the value or undefined when nothing matches; a multi path
// (wildcard, filter, slice, union, recursive descent) gives an array of matches, possibly empty.

import { complexGetter } from './path-complex.js';
import { parsePath } from './path-parse.js';
import { simpleGetter, type Key } from './path-simple.js';
import type { CompiledPath } from './types.js';

/** Compiles a path; throws ExprSyntaxError (with the offset) when it is malformed. */
export function compilePath(source: string): CompiledPath {
  const parsed = parsePath(source);
  if (parsed.simple) {
    const keys: Key[] = [];
    for (const s of parsed.segments) {
      if (s.kind === 'member') keys.push(s.name);
      else if (s.kind === 'index') keys.push(s.index);
    }
    return Object.freeze({ source, root: parsed.root, simple: true, multi: false, get: simpleGetter(keys) });
  }
  return Object.freeze({
    source,
    root: parsed.root,
    simple: false,
    multi: parsed.multi,
    get: complexGetter(parsed.segments, parsed.multi),
  });
}
