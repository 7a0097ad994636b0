// The function extensions of RFC 9535 and its type rules: what each takes and gives, checked
// when a path is compiled. (What they compute is in jsonpath-filter-eval.ts.)
//   length(value) → value     count(nodes) → value     value(nodes) → value
//   match(value, value) → logical                      search(value, value) → logical

import { didYouMean } from '../common/errors.js';
import type { FunctionArg, FunctionCall, FunctionName, FunctionType } from './jsonpath-ast.js';
import { isSingular } from './jsonpath-ast.js';

interface Signature {
  readonly params: readonly FunctionType[];
  readonly result: FunctionType;
}

export const FUNCTIONS: Readonly<Record<FunctionName, Signature>> = {
  length: { params: ['value'], result: 'value' },
  count: { params: ['nodes'], result: 'value' },
  match: { params: ['value', 'value'], result: 'logical' },
  search: { params: ['value', 'value'], result: 'logical' },
  value: { params: ['nodes'], result: 'value' },
};

export function resultType(call: FunctionCall): FunctionType {
  return FUNCTIONS[call.name].result;
}

export function unknownFunction(name: string): string {
  const close = didYouMean(name, Object.keys(FUNCTIONS));
  const hint = close ? `; did you mean ${close}()?` : '';
  return `unknown function ${name}(): JSONPath has length, count, match, search and value${hint}`;
}

/** The first argument that does not fit its parameter (or a wrong count), or undefined. */
export function checkArguments(call: FunctionCall): { message: string; at: number } | undefined {
  const { params } = FUNCTIONS[call.name];
  if (call.args.length !== params.length) {
    const n = params.length;
    return { message: `${call.name}() takes ${n} argument${n === 1 ? '' : 's'}, not ${call.args.length}`, at: call.at };
  }
  for (let i = 0; i < params.length; i++) {
    const arg = call.args[i]!;
    const problem = fits(params[i]!, arg);
    if (problem) return { message: `argument ${i + 1} of ${call.name}(): ${problem}`, at: arg.at };
  }
  return undefined;
}

function fits(param: FunctionType, arg: FunctionArg): string | undefined {
  switch (param) {
    case 'value':
      if (arg.kind === 'literal') return undefined;
      if (arg.kind === 'query') return isSingular(arg.query) ? undefined : 'a query that can select several nodes is not a value: use names and indexes only (a singular query), or value(…)';
      if (arg.kind === 'function') return resultType(arg.call) === 'value' ? undefined : `${arg.call.name}() gives a logical result, not a value`;
      return 'a logical expression is not a value';
    case 'nodes':
      if (arg.kind === 'query') return undefined;
      if (arg.kind === 'function') return resultType(arg.call) === 'nodes' ? undefined : `expected a query, not the result of ${arg.call.name}()`;
      return arg.kind === 'literal' ? 'expected a query (@… or $…), not a literal' : 'expected a query (@… or $…), not a logical expression';
    case 'logical':
      if (arg.kind === 'literal') return 'expected a logical expression, not a literal';
      if (arg.kind === 'function') return resultType(arg.call) === 'value' ? `${arg.call.name}() gives a value, not a logical result` : undefined;
      return undefined;
  }
}
