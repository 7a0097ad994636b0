// The expression layer: everything in a chain that reads the run context, compiled once at load
// time into closures. A run never parses anything, and nothing from a chain file is ever
// executed as JavaScript (no eval, Function, vm or generated code).

export type {
  CompiledCondition,
  CompiledPath,
  CompiledValue,
  ExprProblem,
  Getter,
  PathRef,
  RunContext,
} from './types.js';
export { ExprSyntaxError } from './syntax-error.js';
export { compilePath } from './path.js';
export { compileValue } from './value.js';
export { compileCondition } from './condition.js';
export { parseDuration, parseWaitDuration } from './duration.js';
