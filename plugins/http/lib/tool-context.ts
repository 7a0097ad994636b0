// The part of toolchain's handler context (SPEC §3.1) these tools use, declared here so the
// plugin folder stands on its own. The engine passes a full ToolContext, which fits this shape.

export interface ToolContext {
  /** Fires when the step's deadline passes or the run is cancelled. */
  readonly signal: AbortSignal;
  /** Only the environment variables the manifest's `env:` lists. */
  readonly env: Readonly<Record<string, string | undefined>>;
  log(message: string, fields?: Record<string, unknown>): void;
}

// Node's own errors carry codes too (ECONNRESET, ERR_…), so the tool's errors are remembered.
const made = new WeakSet<Error>();

/** An Error with a string `code`, which chains can name in `retry_on`. */
export function toolError(code: string, message: string): Error & { code: string } {
  const error = Object.assign(new Error(message), { code });
  made.add(error);
  return error;
}

/** True for errors made by toolError, which go to the caller as they are. */
export function isToolError(error: unknown): boolean {
  return error instanceof Error && made.has(error);
}
