import { type DiagnosticCode, ToolchainError } from '../common/errors.js';

// Whatever a handler throws becomes a ToolchainError, so the executor's retry rules and the
// caller's error handling see one shape. A handler's own string `code` (`'RATE_LIMITED'`,
// `'ENOENT'`) is kept, since retry policies may name it.

export function toToolError(thrown: unknown, tool: string): ToolchainError {
  if (thrown instanceof ToolchainError) return thrown;
  const code = (thrown as { code?: unknown } | null)?.code;
  const message =
    thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : `tool '${tool}' threw ${String(thrown)}`;
  // The handler's code is outside the closed DiagnosticCode set by design: Tool.invoke promises it.
  const error = new ToolchainError(typeof code === 'string' && code !== '' ? (code as DiagnosticCode) : 'TOOL_ERROR', message);
  Object.defineProperty(error, 'cause', { value: thrown, enumerable: false, writable: true, configurable: true });
  return error;
}

/** The error a call rejects with when its signal aborts before the handler settles. */
export function abortError(signal: AbortSignal, tool: string): ToolchainError {
  const reason: unknown = signal.reason;
  if (reason instanceof ToolchainError) return reason;
  return new ToolchainError('ABORTED', `the call to tool '${tool}' was cancelled`);
}
