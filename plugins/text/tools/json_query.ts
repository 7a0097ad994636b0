import { JSONPath } from 'jsonpath-plus';
import { toolError } from '../lib/tool-context.js';

// json_query: a JSONPath (jsonpath-plus syntax) over a JSON value, with an optional aggregate
// over the matches, so a chain can total a for_each's results:
//   { value: $.stats, path: '$[*].words', aggregate: sum }  →  { matches: [...], count, result }
// Filters (`[?(@.size > 100)]`) run on jsonpath-plus's safe evaluator, never on eval; they may
// read and compare but not call functions or assign (BAD_PATH), since the evaluator would
// otherwise call whatever methods it can reach.

type Aggregate = 'none' | 'sum' | 'min' | 'max' | 'avg' | 'count' | 'first' | 'last';

interface Args {
  readonly value?: unknown;
  readonly json?: string;
  readonly path: string;
  readonly aggregate?: Aggregate;
}

export interface QueryResult {
  readonly matches: readonly unknown[];
  readonly count: number;
  /** The aggregate of the matches; absent with aggregate none. */
  readonly result?: unknown;
}

const MAX_PATH = 1000;
const FORBIDDEN = /\b(?:__proto__|constructor|prototype|__defineGetter__|__defineSetter__|__lookupGetter__)\b/;

export default async function jsonQuery(args: Args): Promise<QueryResult> {
  const { path, aggregate = 'none' } = args;
  if ((args.value === undefined) === (args.json === undefined)) {
    throw toolError('BAD_ARGUMENT', 'give exactly one of `value` (any JSON value) or `json` (JSON text to parse)');
  }
  let value: unknown = args.value;
  if (args.json !== undefined) {
    try {
      value = JSON.parse(args.json);
    } catch (error) {
      throw toolError('BAD_JSON', `json is not valid JSON: ${(error as Error).message}`);
    }
  }
  checkPath(path);
  let matches: unknown[];
  try {
    // jsonpath-plus finds nothing in a falsy document (null, false, 0, ""): query it one level down.
    matches = value
      ? (JSONPath({ path, json: value as object, wrap: true, eval: 'safe' }) as unknown[])
      : (JSONPath({ path: `$.v${path.slice(1)}`, json: { v: value }, wrap: true, eval: 'safe' }) as unknown[]);
  } catch (error) {
    throw toolError('BAD_PATH', `"${path}" is not a usable JSONPath: ${(error as Error).message}`);
  }
  matches = matches ?? [];
  if (aggregate === 'none') return { matches, count: matches.length };
  return { matches, count: matches.length, result: reduce(matches, aggregate) };
}

function checkPath(path: string): void {
  if (typeof path !== 'string' || !path.startsWith('$')) throw toolError('BAD_PATH', 'path must be a JSONPath starting with $, e.g. $.items[*].name');
  if (path.length > MAX_PATH) throw toolError('BAD_PATH', `the path has ${path.length} characters; at most ${MAX_PATH} are allowed`);
  if (FORBIDDEN.test(path)) throw toolError('BAD_PATH', 'the path names a forbidden property (__proto__, constructor or prototype)');
  // Inside filters and script expressions, with string literals blanked: no calls, assignments or code.
  for (const m of path.matchAll(/\[\?\((.*?)\)\]|\[\((.*?)\)\]/gs)) {
    const script = (m[1] ?? m[2] ?? '').replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/gs, "''");
    if (/[\w$@)\]'"]\s*\(/.test(script)) throw toolError('BAD_PATH', `filter "${m[0]}" calls a function; filters may only read and compare`);
    if (/(?:^|[^=!<>])=(?!=)|\+\+|--|[`;{}\\]/.test(script)) throw toolError('BAD_PATH', `filter "${m[0]}" assigns or contains code; filters may only read and compare`);
  }
}

function reduce(matches: readonly unknown[], aggregate: Exclude<Aggregate, 'none'>): unknown {
  switch (aggregate) {
    case 'count':
      return matches.length;
    case 'first':
      return matches[0] ?? null;
    case 'last':
      return matches[matches.length - 1] ?? null;
    default: {
      const numbers = matches.filter((m): m is number => typeof m === 'number' && Number.isFinite(m));
      if (numbers.length !== matches.length) {
        throw toolError('NOT_NUMBERS', `aggregate "${aggregate}" needs numbers, but ${matches.length - numbers.length} of the ${matches.length} matches are not`);
      }
      if (aggregate === 'sum') return numbers.reduce((a, b) => a + b, 0);
      if (numbers.length === 0) return null;
      if (aggregate === 'min') return numbers.reduce((a, b) => Math.min(a, b));
      if (aggregate === 'max') return numbers.reduce((a, b) => Math.max(a, b));
      return numbers.reduce((a, b) => a + b, 0) / numbers.length;
    }
  }
}
