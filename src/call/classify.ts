import { failureCode, ToolchainError, type StepError } from '../common/errors.js';

// Whatever an attempt throws becomes a StepError: the engine's own errors keep their code; a
// handler's error keeps its own string code (`RATE_LIMITED`, `ENOENT`: retry policies may name
// it); anything else is TOOL_ERROR. The message is one line of what went wrong.

/**
 * `keepStack` (an owner run with `debug`): a handler's Error keeps its stack, with the handler's
 * own file and line. Off otherwise: formatting a stack costs more than the rest of a failure.
 */
export function toStepError(thrown: unknown, keepStack = false): StepError {
  if (thrown instanceof CallFailure) return thrown.failure;
  if (thrown instanceof ToolchainError) return { code: thrown.code, message: thrown.message };
  const code = (thrown as { code?: unknown } | null)?.code;
  const message = thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : `threw ${String(thrown)}`;
  const error: StepError = { code: typeof code === 'string' && code !== '' ? failureCode(code) : 'TOOL_ERROR', message };
  return keepStack && thrown instanceof Error && typeof thrown.stack === 'string' ? { ...error, stack: thrown.stack } : error;
}

/** A failure already classified (a sub-chain's), thrown by a callee so that it is reported as it is. */
export class CallFailure extends Error {
  readonly failure: StepError;

  constructor(failure: StepError) {
    super(failure.message);
    this.name = 'CallFailure';
    this.failure = failure;
  }
}
