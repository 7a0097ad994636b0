// The handler context comes from toolchain's type-only entry: nothing is loaded at
// run time. The error helper stays here, so the plugin folder needs no runtime import of toolchain.
export type { ToolContext } from 'toolchain/plugin';

/** An Error with a string `code`, which chains can name in `retry_on`. */
export function toolError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
