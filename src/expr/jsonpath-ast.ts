// The parsed form of an RFC 9535 JSONPath query. Every node keeps `at`, the 0-based offset of its
// first character in the path text, so that later checks can point at it.

export type Selector =
  | { readonly kind: 'name'; readonly name: string; readonly at: number }
  | { readonly kind: 'index'; readonly index: number; readonly at: number }
  | { readonly kind: 'wildcard'; readonly at: number }
  | { readonly kind: 'slice'; readonly start?: number; readonly end?: number; readonly step?: number; readonly at: number }
  | { readonly kind: 'filter'; readonly expr: LogicalExpr; readonly at: number };

export interface Segment {
  /** `..`: the selectors apply to the node and every node below it. */
  readonly descendant: boolean;
  readonly selectors: readonly Selector[];
  readonly at: number;
}

export interface Query {
  /** `$` (the root) or `@` (the node a filter is looking at). */
  readonly origin: '$' | '@';
  readonly segments: readonly Segment[];
  readonly at: number;
}

export type JsonLiteral = string | number | boolean | null;

/** What a function extension takes and gives (the RFC's type system). */
export type FunctionType = 'value' | 'logical' | 'nodes';

export type FunctionName = 'length' | 'count' | 'match' | 'search' | 'value';

export interface FunctionCall {
  readonly name: FunctionName;
  readonly args: readonly FunctionArg[];
  readonly at: number;
}

export type FunctionArg =
  | { readonly kind: 'literal'; readonly value: JsonLiteral; readonly at: number }
  | { readonly kind: 'query'; readonly query: Query; readonly at: number }
  | { readonly kind: 'logical'; readonly expr: LogicalExpr; readonly at: number }
  | { readonly kind: 'function'; readonly call: FunctionCall; readonly at: number };

/** An operand of a comparison: a literal, a singular query, or a function giving a value. */
export type Comparable =
  | { readonly kind: 'literal'; readonly value: JsonLiteral }
  | { readonly kind: 'query'; readonly query: Query }
  | { readonly kind: 'function'; readonly call: FunctionCall };

export type ComparisonOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

export type LogicalExpr =
  | { readonly kind: 'or' | 'and'; readonly operands: readonly LogicalExpr[] }
  | { readonly kind: 'not'; readonly operand: LogicalExpr }
  /** An existence test: true when the query selects at least one node. */
  | { readonly kind: 'exists'; readonly query: Query }
  /** A function giving a logical value (match, search) or nodes (tested for existence). */
  | { readonly kind: 'call'; readonly call: FunctionCall }
  | { readonly kind: 'compare'; readonly op: ComparisonOp; readonly left: Comparable; readonly right: Comparable };

/** Only child segments with one name or index each: the query selects at most one node. */
export function isSingular(query: Query): boolean {
  return query.segments.every((s) => !s.descendant && s.selectors.length === 1 && (s.selectors[0]!.kind === 'name' || s.selectors[0]!.kind === 'index'));
}
