import { ToolchainError, type DiagnosticCode } from '../common/errors.js';

// What a failed step records: a code (a DiagnosticCode, or a handler's own string code such as
// 'RATE_LIMITED', which `retry_on` may name) and a one-line message. Plain data, so it can be
// checkpointed and sent as JSON.

export interface StepError {
  readonly code: string;
  readonly message: string;
}

export function toStepError(thrown: unknown): StepError {
  if (thrown instanceof ToolchainError) return { code: thrown.code, message: thrown.message };
  const code = (thrown as { code?: unknown } | null)?.code;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { code: typeof code === 'string' && code !== '' ? code : 'TOOL_ERROR', message };
}

/** A ToolchainError from a StepError, for rejecting with a code a handler's code may not be in the closed set. */
export function stepFailure(code: string, message: string): ToolchainError {
  // The code may be a handler's own (outside DiagnosticCode), as Tool.invoke also allows.
  return new ToolchainError(code as DiagnosticCode, message);
}
