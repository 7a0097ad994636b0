// The handler context's type, and the engine's HTTP errors, come from toolchain/plugin (handed to
// the plugin by the engine that loads it). The error helper for the tool's own errors stays here.
export type { ToolContext } from 'toolchain/plugin';
import { NetError } from 'toolchain/plugin';

// Node's own errors carry codes too (ECONNRESET, ERR_…), so the tool's errors are remembered.
const made = new WeakSet<Error>();

/** An Error with a string `code`, which chains can name in `retry_on`. */
export function toolError(code: string, message: string): Error & { code: string } {
  const error = Object.assign(new Error(message), { code });
  made.add(error);
  return error;
}

/** True for errors made by toolError or by the engine's HTTP layer, which go to the caller as they are. */
export function isToolError(error: unknown): boolean {
  return error instanceof NetError || (error instanceof Error && made.has(error));
}
