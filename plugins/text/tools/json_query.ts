// The engine's own JSONPath evaluator: this plugin ships in the engine's repository, and a path
// given to json_query reads exactly as the same path in a chain.
import { compilePath, ExprSyntaxError } from '../../../src/expr/index.js';
import { toolError } from '../lib/tool-context.js';

// json_query: an RFC 9535 JSONPath over a JSON value, with an optional aggregate over the
// matches, so a chain can total a for_each's results:
//   { value: $.stats, path: '$[*].words', aggregate: sum }  →  { matches: [...], count, result }
// Filters (`[?@.size > 100]`) compare values and call JSONPath's functions (length, count, match,
// search, value); nothing in a path is ever run as JavaScript.

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
  let compiled;
  try {
    compiled = compilePath(path);
  } catch (error) {
    if (!(error instanceof ExprSyntaxError)) throw error;
    throw toolError('BAD_PATH', `"${path}" is not a valid JSONPath: ${error.message} (at character ${error.index + 1})`);
  }
  const found = compiled.get(value as Record<string, unknown>);
  // A path of names and indexes gives its one value (or nothing); any other gives every match.
  const matches = compiled.multi ? (found as unknown[]) : found === undefined ? [] : [found];
  if (aggregate === 'none') return { matches, count: matches.length };
  return { matches, count: matches.length, result: reduce(matches, aggregate) };
}

function checkPath(path: string): void {
  if (typeof path !== 'string' || !path.startsWith('$')) throw toolError('BAD_PATH', 'path must be a JSONPath starting with $, e.g. $.items[*].name');
  if (path.length > MAX_PATH) throw toolError('BAD_PATH', `the path has ${path.length} characters; at most ${MAX_PATH} are allowed`);
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
