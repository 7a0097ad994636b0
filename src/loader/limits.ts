import type { LoadLimits } from './types.js';

/** Generous for hand-written chains and manifests, small enough that no input can stall the engine. */
export const DEFAULT_LOAD_LIMITS: LoadLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxAliases: 100,
  maxDiagnostics: 100,
});

export function resolveLimits(limits: Partial<LoadLimits> | undefined): LoadLimits {
  // Spread would let an explicit `undefined` erase a default; take each field on its own.
  return {
    maxBytes: limits?.maxBytes ?? DEFAULT_LOAD_LIMITS.maxBytes,
    maxDepth: limits?.maxDepth ?? DEFAULT_LOAD_LIMITS.maxDepth,
    maxAliases: limits?.maxAliases ?? DEFAULT_LOAD_LIMITS.maxAliases,
    maxDiagnostics: limits?.maxDiagnostics ?? DEFAULT_LOAD_LIMITS.maxDiagnostics,
  };
}
