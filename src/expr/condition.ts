// compileCondition: the `when` language, tokenized and parsed once into closures.
// Nothing here evaluates text as code: the grammar is closed and the evaluator is a fixed set of
// closures over the parsed tree.

import { tokenize } from './condition-lexer.js';
import { compileTest } from './condition-eval.js';
import { parseCondition } from './condition-parser.js';
import { compilePath } from './path.js';
import { pushRefs } from './value.js';
import { ExprSyntaxError } from './syntax-error.js';
import type { CompiledCondition, CompiledPath, ExprProblem, PathRef } from './types.js';

export function compileCondition(source: string): { condition?: CompiledCondition; problems: ExprProblem[] } {
  // A YAML `when: true` arrives as a boolean; say so rather than report an empty expression.
  if (typeof source !== 'string') {
    return { problems: [{ code: 'BAD_EXPRESSION', message: `a condition must be a string, got ${typeof source}`, pointer: '' }] };
  }
  const refs: PathRef[] = [];
  const collect = (text: string): CompiledPath => {
    const path = compilePath(text);
    pushRefs(refs, path, '');
    return path;
  };
  try {
    const expr = parseCondition(tokenize(source), collect);
    const condition: CompiledCondition = Object.freeze({ source, test: compileTest(expr), refs: Object.freeze(refs) });
    return { condition, problems: [] };
  } catch (error) {
    if (!(error instanceof ExprSyntaxError)) throw error;
    return {
      problems: [{ code: 'BAD_EXPRESSION', message: `bad condition: ${error.message} at character ${error.index + 1} of the condition`, pointer: '', offset: error.index }],
    };
  }
}
