import type { ErrorCode } from '../common/errors.js';

/**
 * The run context: chain inputs and finished steps' outputs by name. The executor may hand a
 * getter an object whose prototype is the run context (for `$.item` / `$.index` in `for_each`),
 * so getters read root members with plain property access, never own-property checks.
 */
export type RunContext = Readonly<Record<string, unknown>>;

export type Getter = (ctx: RunContext) => unknown;

/** A JSONPath or template found inside a value, and where it sits. */
export interface PathRef {
  /** The root member the path reads (`locate` for `$.locate.city`); undefined for `$..x`, `$.*`, `$`. */
  readonly root: string | undefined;
  readonly source: string;
  /** RFC 6901 pointer of the string holding it, relative to the pointer passed to the compiler. */
  readonly pointer: string;
}

export interface CompiledPath {
  readonly source: string;
  readonly root: string | undefined;
  /** True for names and indexes only (RFC 9535's singular query), compiled to direct property access. */
  readonly simple: boolean;
  /** True when the path can match many nodes (wildcard, filter, slice, recursive descent, union): the result is then an array. */
  readonly multi: boolean;
  /** The root members that absolute queries inside filters read (undefined: any), for the DAG. */
  readonly filterRoots: readonly (string | undefined)[];
  readonly get: Getter;
}

export interface CompiledValue {
  readonly get: Getter;
  readonly refs: readonly PathRef[];
  /** True when no path or template occurs: `get` always returns the same value. */
  readonly constant: boolean;
  /** For an object value: the path or template source behind each top-level key that has one. */
  readonly sources: Readonly<Record<string, string>>;
}

export interface CompiledCondition {
  readonly source: string;
  readonly test: (ctx: RunContext) => boolean;
  readonly refs: readonly PathRef[];
}

export interface ExprProblem {
  readonly code: Extract<ErrorCode, 'BAD_JSONPATH' | 'BAD_TEMPLATE' | 'BAD_EXPRESSION'>;
  readonly message: string;
  /** RFC 6901 pointer relative to the pointer passed to the compiler ('' for the value itself). */
  readonly pointer: string;
  /** 0-based offset of the problem in the string at `pointer` (the path, template or condition). */
  readonly offset?: number;
}
