// Filter expressions of RFC 9535 (what follows `?` in a bracket), with the RFC's type rules
// checked as they are read:
//
//   logical  = and *(S "||" S and)
//   and      = basic *(S "&&" S basic)
//   basic    = ["!" S] "(" S logical S ")" | ["!" S] test | comparable S op S comparable
//   test     = query | function              (a query: does it select anything?)
//   comparable = literal | singular query | function giving a value
//   op       = "==" | "!=" | "<" | "<=" | ">" | ">="
//
// A literal stands alone only as a function argument; a query compared must be singular (names
// and indexes only); a function's arguments and result must fit where it is used.

import type { Comparable, ComparisonOp, FunctionArg, FunctionCall, LogicalExpr, Query } from './jsonpath-ast.js';
import { isSingular } from './jsonpath-ast.js';
import { checkArguments, FUNCTIONS, resultType, unknownFunction } from './jsonpath-functions.js';
import { afterOperandHabit, comparisonHabit, currentNodeHabit, operandHabit } from './jsonpath-habits.js';
import { readNumber, readString } from './jsonpath-literals.js';
import { describeAt, type Scanner } from './jsonpath-scanner.js';

export type QueryReader = (s: Scanner) => Query;

/** What one operand or expression turned out to be, before its place decides whether it fits. */
type Item =
  | { readonly kind: 'expr'; readonly expr: LogicalExpr; readonly at: number }
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null; readonly at: number }
  | { readonly kind: 'query'; readonly query: Query; readonly at: number }
  | { readonly kind: 'call'; readonly call: FunctionCall; readonly at: number };

/** The filter after `?` (blanks skipped), up to but not including what follows it. */
export function parseFilter(s: Scanner, readQuery: QueryReader): LogicalExpr {
  return asTest(s, readOr(s, readQuery));
}

function readOr(s: Scanner, q: QueryReader): Item {
  return readChain(s, '||', 'or', () => readChain(s, '&&', 'and', () => readBasic(s, q)));
}

function readChain(s: Scanner, op: string, kind: 'or' | 'and', next: () => Item): Item {
  const first = next();
  const items = [first];
  for (;;) {
    const before = s.pos;
    s.skipBlank();
    if (!s.startsWith(op)) {
      s.pos = before;
      break;
    }
    s.pos += 2;
    s.skipBlank();
    items.push(next());
  }
  if (items.length === 1) return first;
  return { kind: 'expr', expr: { kind, operands: items.map((i) => asTest(s, i)) }, at: first.at };
}

function readBasic(s: Scanner, q: QueryReader): Item {
  const at = s.pos;
  if (s.peek() === '!') {
    s.pos += 1;
    s.skipBlank();
    const operand = s.peek() === '(' ? readParen(s, q) : readOperand(s, q);
    if (operand.kind === 'literal') s.fail("'!' applies to a test or a parenthesized expression, not to a literal", operand.at);
    noComparison(s, `'!' applies to a test, not to a comparison: write !(… == …) with parentheses`, at);
    return { kind: 'expr', expr: { kind: 'not', operand: asTest(s, operand) }, at };
  }
  if (s.peek() === '(') {
    const inner = readParen(s, q);
    noComparison(s, 'a parenthesized expression cannot be compared; compare the operands inside it', at);
    return inner;
  }
  const left = readOperand(s, q);
  const before = s.pos;
  s.skipBlank();
  const op = readComparison(s);
  if (op === undefined) {
    s.pos = before;
    return left;
  }
  s.skipBlank();
  const right = s.peek() === '(' || s.peek() === '!' ? s.expected('a literal, a singular query or a function after the comparison') : readOperand(s, q);
  const expr: LogicalExpr = { kind: 'compare', op, left: comparable(s, left, before), right: comparable(s, right, s.pos) };
  return { kind: 'expr', expr, at };
}

function noComparison(s: Scanner, message: string, at: number): void {
  const before = s.pos;
  s.skipBlank();
  const found = readComparison(s) !== undefined;
  s.pos = before;
  if (found) s.fail(message, at);
}

function readParen(s: Scanner, q: QueryReader): Item {
  const at = s.pos;
  s.enter(at);
  s.pos += 1;
  s.skipBlank();
  const inner = readOr(s, q);
  s.skipBlank();
  if (s.peek() !== ')') {
    if (s.done) s.fail("unclosed '(': expected ')'", at);
    s.fail(afterOperandHabit(s.text, s.pos) ?? `expected '&&', '||', a comparison or ')', found ${describeAt(s.text, s.pos)}`);
  }
  s.pos += 1;
  s.leave();
  return { kind: 'expr', expr: asTest(s, inner), at };
}

function readComparison(s: Scanner): ComparisonOp | undefined {
  const habit = comparisonHabit(s.text, s.pos);
  if (habit) s.fail(habit);
  for (const op of ['==', '!=', '<=', '>=', '<', '>'] as const) {
    if (s.startsWith(op)) {
      s.pos += op.length;
      return op;
    }
  }
  return undefined;
}

const WORD = /[a-z][a-z0-9_]*/y;

function readOperand(s: Scanner, q: QueryReader): Item {
  const at = s.pos;
  const c = s.peek();
  if (c === '@' || c === '$') {
    if (c === '@') {
      const habit = currentNodeHabit(s.text, at);
      if (habit) s.fail(habit, at);
    }
    return { kind: 'query', query: q(s), at };
  }
  if (c === "'" || c === '"') return { kind: 'literal', value: readString(s), at };
  if (c === '-' || (c >= '0' && c <= '9')) return { kind: 'literal', value: readNumber(s), at };
  WORD.lastIndex = at;
  const word = WORD.exec(s.text)?.[0];
  if (word !== undefined) {
    const open = s.text[at + word.length] === '(';
    if (!open && (word === 'true' || word === 'false' || word === 'null')) {
      s.pos += word.length;
      return { kind: 'literal', value: word === 'null' ? null : word === 'true', at };
    }
    if (open || Object.hasOwn(FUNCTIONS, word)) return { kind: 'call', call: readCall(s, word, q), at };
  }
  if (s.done) s.expected('a query (@… or $…), a literal or a function call');
  return s.fail(operandHabit(s.text, at) ?? `expected a query (@… or $…), a literal or a function call, found ${describeAt(s.text, at)}`, at);
}

function readCall(s: Scanner, name: string, q: QueryReader): FunctionCall {
  const at = s.pos;
  if (!Object.hasOwn(FUNCTIONS, name)) s.fail(unknownFunction(name), at);
  s.pos += name.length;
  if (s.peek() !== '(') s.fail(`expected '(' right after the function name ${name}, found ${describeAt(s.text, s.pos)}`);
  s.enter(at);
  s.pos += 1;
  s.skipBlank();
  const args: FunctionArg[] = [];
  if (s.peek() === ')') s.pos += 1;
  else {
    for (;;) {
      args.push(argument(readOr(s, q)));
      s.skipBlank();
      if (s.peek() === ',') {
        s.pos += 1;
        s.skipBlank();
        continue;
      }
      if (s.peek() === ')') {
        s.pos += 1;
        break;
      }
      if (s.done) s.fail(`unclosed '(' of ${name}(): expected ')'`, at + name.length);
      s.fail(afterOperandHabit(s.text, s.pos) ?? `expected ',' or ')' in ${name}(), found ${describeAt(s.text, s.pos)}`);
    }
  }
  s.leave();
  const call: FunctionCall = { name: name as FunctionCall['name'], args, at };
  const problem = checkArguments(call);
  if (problem) s.fail(problem.message, problem.at);
  return call;
}

function argument(item: Item): FunctionArg {
  switch (item.kind) {
    case 'literal':
      return { kind: 'literal', value: item.value, at: item.at };
    case 'query':
      return { kind: 'query', query: item.query, at: item.at };
    case 'call':
      return { kind: 'function', call: item.call, at: item.at };
    case 'expr':
      return { kind: 'logical', expr: item.expr, at: item.at };
  }
}

/** An item where a test is expected: a filter, either side of && and ||, after '!' or in parentheses. */
function asTest(s: Scanner, item: Item): LogicalExpr {
  switch (item.kind) {
    case 'expr':
      return item.expr;
    case 'query':
      return { kind: 'exists', query: item.query };
    case 'call':
      if (resultType(item.call) === 'value') {
        s.fail(`${item.call.name}() gives a value, not a test: compare it, e.g. ${item.call.name}(…) > 0`, item.at);
      }
      return { kind: 'call', call: item.call };
    case 'literal':
      return s.fail(`a literal cannot stand alone as a test: compare it with something, e.g. @.a == ${JSON.stringify(item.value)}`, item.at);
  }
}

/** `end`: where the item's text ends, for messages that quote it. */
function comparable(s: Scanner, item: Item, end: number): Comparable {
  switch (item.kind) {
    case 'literal':
      return { kind: 'literal', value: item.value };
    case 'query': {
      if (!isSingular(item.query)) {
        const text = s.text.slice(item.at, end);
        s.fail(`${text} can select several nodes, so it cannot be compared: compare a query of names and indexes only (a singular query), or use count(…) or value(…)`, item.at);
      }
      return { kind: 'query', query: item.query };
    }
    case 'call':
      if (resultType(item.call) !== 'value') {
        s.fail(`${item.call.name}() gives a logical result, which cannot be compared: use it as a test on its own, e.g. [?${item.call.name}(…)]`, item.at);
      }
      return { kind: 'function', call: item.call };
    case 'expr':
      return s.fail('only a literal, a singular query or a function can be compared', item.at);
  }
}
