// The part of toolchain's handler context (SPEC §3.1) these tools use, declared here so the
// plugin folder stands on its own. The engine passes a full ToolContext, which fits this shape.

export interface ToolContext {
  /** Fires when the step's deadline passes or the run is cancelled. */
  readonly signal: AbortSignal;
  /** Only the environment variables the manifest's `env:` lists. */
  readonly env: Readonly<Record<string, string | undefined>>;
  log(message: string, fields?: Record<string, unknown>): void;
}

/** An Error with a string `code`, which chains can name in `retry_on`. */
export function toolError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
