// Templates: strings with `{{ JSONPath }}` placeholders.
// - A string that is exactly one placeholder (spaces inside the braces allowed, nothing outside)
//   yields the value itself, not its text, so `"{{ $.search.results }}"` passes the array.
// - Otherwise each placeholder is replaced by its value's text: strings as they are; numbers,
//   booleans and bigints through String; objects and arrays as JSON; undefined and null as the
//   empty string (a missing value renders as nothing rather than the word "undefined").
// There is no escape for a literal `{{`; a `}}` without an opening `{{` is plain text.

import { compilePath } from './path.js';
import { ExprSyntaxError } from './syntax-error.js';
import type { CompiledPath, Getter } from './types.js';

export interface TemplateProblem {
  readonly message: string;
  readonly offset: number;
}

export interface CompiledTemplate {
  readonly get: Getter;
  readonly paths: readonly CompiledPath[];
  readonly problems: readonly TemplateProblem[];
}

export function isTemplate(text: string): boolean {
  return text.includes('{{');
}

export function compileTemplate(text: string): CompiledTemplate {
  const literals: string[] = [];
  const paths: CompiledPath[] = [];
  const problems: TemplateProblem[] = [];
  let cursor = 0;
  let wholeValue = false;
  for (;;) {
    const open = text.indexOf('{{', cursor);
    if (open < 0) {
      literals.push(text.slice(cursor));
      break;
    }
    const close = findClose(text, open + 2);
    if (close < 0) {
      problems.push({ message: `unclosed '{{' at character ${open + 1}: expected '}}'`, offset: open });
      literals.push(text.slice(cursor));
      break;
    }
    literals.push(text.slice(cursor, open));
    const inner = text.slice(open + 2, close);
    const lead = inner.length - inner.trimStart().length;
    const source = inner.trim();
    try {
      if (source === '') throw new ExprSyntaxError('expected a JSONPath', 0);
      paths.push(compilePath(source));
    } catch (error) {
      if (!(error instanceof ExprSyntaxError)) throw error;
      const at = open + 2 + lead + error.index;
      problems.push({ message: `bad JSONPath in '{{ … }}' at character ${at + 1}: ${error.message}`, offset: at });
      paths.push(MISSING);
    }
    cursor = close + 2;
    wholeValue = open === 0 && cursor === text.length;
  }
  const get = wholeValue && paths.length === 1 ? (paths[0] as CompiledPath).get : interpolate(literals, paths);
  return { get, paths, problems };
}

/** Stands in for a placeholder whose path did not compile, so the others still line up. */
const MISSING: CompiledPath = Object.freeze({
  source: '',
  root: undefined,
  simple: true,
  multi: false,
  filterRoots: [],
  get: () => undefined,
});

/**
 * The `}}` closing a placeholder opened before `from`: quoted strings and brackets inside the
 * path are skipped, so `{{ $['}}'] }}` works. -1 when there is none.
 */
function findClose(text: string, from: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (quote !== undefined) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '[') depth += 1;
    else if (ch === ']') depth = Math.max(0, depth - 1);
    else if (ch === '}' && depth === 0 && text[i + 1] === '}') return i;
  }
  return -1;
}

function interpolate(literals: readonly string[], paths: readonly CompiledPath[]): Getter {
  // literals.length === getters.length + 1: text, value, text, …, text.
  const getters = paths.map((p) => p.get);
  const n = getters.length;
  const first = literals[0] ?? '';
  return (ctx) => {
    let out = first;
    for (let i = 0; i < n; i++) {
      out += render((getters[i] as Getter)(ctx)) + (literals[i + 1] ?? '');
    }
    return out;
  };
}

export function render(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      if (value === null) return '';
      try {
        return JSON.stringify(value);
      } catch {
        // Circular or holding a bigint: tools' outputs are checked by the executor, so this
        // is a last resort rather than a format anyone relies on.
        return String(value);
      }
    default:
      // undefined, and functions or symbols, which JSON values never are.
      return '';
  }
}
