import type { JsonSchema } from '../../common/json.js';
import { closestNames, ToolchainError } from '../../common/errors.js';
import type { Callable, CallableSource } from './callables.js';
import { exportNames, type ExportedCallable } from './export-names.js';

// The options every exporter shares, and the one place they are applied. Names are computed over
// every tool and chain before filtering, so a tool keeps its exported name whether or not chains
// are exported beside it.

export interface ExportOptions {
  /** Include tools (default true). */
  readonly tools?: boolean;
  /** Include chains (default true). */
  readonly chains?: boolean;
  /**
   * Only these, in this order: exported names, qualified tool names (`geo/find_city`) or chain
   * names. An unknown name throws TOOL_NOT_FOUND with the closest names (a configuration error).
   */
  readonly include?: readonly string[];
}

export function selectCallables(source: CallableSource | readonly Callable[], options: ExportOptions = {}): ExportedCallable[] {
  const names = exportNames(source);
  const wantTools = options.tools ?? true;
  const wantChains = options.chains ?? true;
  const kindOk = (c: ExportedCallable): boolean => (c.kind === 'tool' ? wantTools : wantChains);
  if (options.include === undefined) return names.callables.filter(kindOk);
  const out: ExportedCallable[] = [];
  for (const name of options.include) {
    const found = names.resolve(name);
    if (found === undefined) {
      const closest = closestNames(name, names.names(), 3);
      throw new ToolchainError('TOOL_NOT_FOUND', `unknown tool or chain '${name}'${closest.length > 0 ? `; closest: ${closest.join(', ')}` : ''}`);
    }
    if (kindOk(found) && !out.includes(found)) out.push(found);
  }
  return out;
}

/** A copy of a parameters schema that is an object schema at its root, as every format wants. */
export function objectSchema(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema) as Record<string, unknown>;
  if (copy.type === undefined) copy.type = 'object';
  if (copy.type === 'object' && copy.properties === undefined) copy.properties = {};
  return copy;
}
