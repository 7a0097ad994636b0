// The handler context (SPEC §3.1) comes from toolchain's type-only entry: nothing is loaded at
// run time. The error helper stays here, so the plugin folder needs no runtime import of toolchain.
export type { ToolContext } from 'toolchain/plugin';

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
