import { compilePath, ExprSyntaxError } from '../expr/index.js';

/**
 * Outbound HTTP under the engine's address policy (no private, loopback or metadata addresses unless
 * TOOLCHAIN_HTTP_ALLOW lists them, checked on the addresses DNS gives at connection time), with a
 * streamed read that stops at a size limit: what the shipped http plugin and OpenAPI operations use.
 */
export { ALLOW_VARIABLE, NetError, parseAllowList, readLimited, sendRequest, tooLarge, type AllowEntry, type RequestSpec } from '../net/index.js';

// What a plugin's code gets at run time from `import … from 'toolchain/plugin'`. The module loader
// hands every plugin this module of the engine that loads it (evaluate-module.ts), so a plugin
// copied out of the package (`toolchain init --shipped`) needs no copy of the engine beside it,
// whether toolchain is installed in the project or globally. Keep it small: it is a promise to
// every plugin author.

/** An error with a code of the handler's choosing, which `retry_on` and results see as it is. */
export { HandlerError } from '../common/errors.js';

/** A JSONPath that does not parse: `index` is the 0-based character where the RFC expected something else. */
export { ExprSyntaxError as JsonPathSyntaxError };

export interface CompiledJsonPath {
  /** The nodes the path selects in `value`, in document order (an empty list when none). */
  query(value: unknown): unknown[];
}

/**
 * Compiles an RFC 9535 JSONPath once, exactly as chains read it. Throws JsonPathSyntaxError for a
 * path that is not valid JSONPath.
 */
export function compileJsonPath(path: string): CompiledJsonPath {
  const compiled = compilePath(path);
  return {
    query(value) {
      const found = compiled.get(value as Record<string, unknown>);
      // A path of names and indexes yields its one value (or nothing); any other, every match.
      if (compiled.multi) return found as unknown[];
      return found === undefined ? [] : [found];
    },
  };
}
