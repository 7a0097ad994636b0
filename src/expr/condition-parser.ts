// Recursive-descent parser for `when`. Precedence, loosest first:
//   or      := and ('||' and)*
//   and     := compare ('&&' compare)*
//   compare := unary (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'in') unary)?   -- no chaining
//   unary   := '!' unary | primary
//   primary := PATH | literal | list | '(' or ')'
//   list    := '[' (literal (',' literal)*)? ']'         -- e.g. ['JP', 'FR'], for `in` and `==`
// As in JavaScript, `!` binds tighter than comparison: `!$.a == 1` is `(!$.a) == 1`.
// `&&` and `||` chains become one n-ary node, so a long flat chain costs no recursion; nesting
// (parentheses, `!`) is limited to MAX_DEPTH so a hostile file can't exhaust the stack.

import type { Operator, Token } from './condition-lexer.js';
import { ExprSyntaxError } from './syntax-error.js';
import type { CompiledPath } from './types.js';

export const MAX_DEPTH = 64;

export type Scalar = string | number | boolean | null;

export type Comparison = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in';

export type Expr =
  | { readonly type: 'path'; readonly path: CompiledPath }
  | { readonly type: 'literal'; readonly value: Scalar | readonly Scalar[] }
  | { readonly type: 'not'; readonly operand: Expr }
  | { readonly type: 'and' | 'or'; readonly operands: readonly Expr[] }
  | { readonly type: 'compare'; readonly op: Comparison; readonly left: Expr; readonly right: Expr };

const COMPARISONS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

/** Compiles one path operand; throws ExprSyntaxError with an index relative to the path text. */
export type PathCompiler = (text: string) => CompiledPath;

export function parseCondition(tokens: readonly Token[], compilePath: PathCompiler): Expr {
  let pos = 0;
  let depth = 0;

  const peek = (): Token => tokens[pos] ?? (tokens[tokens.length - 1] as Token);
  const next = (): Token => {
    const t = peek();
    if (t.kind !== 'end') pos += 1;
    return t;
  };
  const isOp = (t: Token, op: Operator): boolean => t.kind === 'op' && t.op === op;

  function describe(t: Token): string {
    switch (t.kind) {
      case 'end':
        return 'the end of the expression';
      case 'path':
        return `'${t.text}'`;
      case 'literal':
        return typeof t.value === 'string' ? `the string ${JSON.stringify(t.value)}` : `'${String(t.value)}'`;
      case 'op':
        return `'${t.op}'`;
      default:
        return `'${t.kind}'`;
    }
  }

  function fail(expected: string, t: Token): never {
    throw new ExprSyntaxError(`expected ${expected}, found ${describe(t)}`, t.at);
  }

  function parseOr(): Expr {
    const operands = [parseAnd()];
    while (isOp(peek(), '||')) {
      next();
      operands.push(parseAnd());
    }
    return operands.length === 1 ? (operands[0] as Expr) : { type: 'or', operands };
  }

  function parseAnd(): Expr {
    const operands = [parseCompare()];
    while (isOp(peek(), '&&')) {
      next();
      operands.push(parseCompare());
    }
    return operands.length === 1 ? (operands[0] as Expr) : { type: 'and', operands };
  }

  function parseCompare(): Expr {
    const left = parseUnary();
    const t = peek();
    let op: Comparison | undefined;
    if (t.kind === 'in') op = 'in';
    else if (t.kind === 'op' && COMPARISONS.has(t.op)) op = t.op as Comparison;
    if (op === undefined) return left;
    next();
    const right = parseUnary();
    const after = peek();
    if (after.kind === 'in' || (after.kind === 'op' && COMPARISONS.has(after.op))) {
      fail("'&&', '||' or ')' (comparisons don't chain; use parentheses)", after);
    }
    return { type: 'compare', op, left, right };
  }

  function parseUnary(): Expr {
    if (isOp(peek(), '!')) {
      const bang = next();
      enter(bang);
      const operand = parseUnary();
      depth -= 1;
      return { type: 'not', operand };
    }
    return parsePrimary();
  }

  function parsePrimary(): Expr {
    const t = next();
    switch (t.kind) {
      case 'path':
        try {
          return { type: 'path', path: compilePath(t.text) };
        } catch (error) {
          if (!(error instanceof ExprSyntaxError)) throw error;
          throw new ExprSyntaxError(`bad JSONPath '${t.text}': ${error.message}`, t.at + error.index);
        }
      case 'literal':
        return { type: 'literal', value: t.value };
      case '[':
        return { type: 'literal', value: parseList() };
      case '(': {
        enter(t);
        const inner = parseOr();
        const close = next();
        if (close.kind !== ')') fail("')' or an operator", close);
        depth -= 1;
        return inner;
      }
      default:
        return fail("a JSONPath ($…), a literal, a list, '!' or '('", t);
    }
  }

  /** The elements of a list literal, after its `[`: literals only, so a list is a constant. */
  function parseList(): readonly Scalar[] {
    const items: Scalar[] = [];
    if (peek().kind === ']') {
      next();
      return Object.freeze(items);
    }
    for (;;) {
      const t = next();
      if (t.kind !== 'literal') fail("a literal (a number, a quoted string, true, false or null) in the list", t);
      items.push(t.value);
      const after = next();
      if (after.kind === ']') return Object.freeze(items);
      if (after.kind !== ',') fail("',' or ']'", after);
    }
  }

  function enter(t: Token): void {
    depth += 1;
    if (depth > MAX_DEPTH) throw new ExprSyntaxError(`expression nested too deeply (more than ${MAX_DEPTH} levels)`, t.at);
  }

  const expr = parseOr();
  const end = peek();
  if (end.kind !== 'end') fail("'&&', '||' or the end of the expression", end);
  return expr;
}
