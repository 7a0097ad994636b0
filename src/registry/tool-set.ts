import type { Diagnostic } from '../common/errors.js';
import type { InactiveProvider, Tool, ToolSet } from './types.js';

// One immutable view of every tool. Names resolve in a fixed order: tools from code first (the
// program has the last word), then plugins in the order they were first registered. A bare name
// two providers share resolves to the first and produces a NAME_COLLISION warning; `plugin/name`
// always reaches the other.

export interface ToolSetParts {
  readonly version: number;
  readonly codeTools: Iterable<Tool>;
  /** Plugins in registration order, each with its tools. */
  readonly pluginTools: Iterable<readonly Tool[]>;
  /** Bare and qualified names of tools that are gone → the plugin that provided them. */
  readonly former: ReadonlyMap<string, string>;
  readonly warnings: readonly Diagnostic[];
  /** Bare and qualified names of tools of inactive plugins → the plugin and why. */
  readonly inactive?: ReadonlyMap<string, InactiveProvider>;
  /** Bare and qualified names of tools a plugin declares that failed to load → the plugin and why. */
  readonly failed?: ReadonlyMap<string, InactiveProvider>;
}

export function createToolSet(parts: ToolSetParts): ToolSet {
  const byName = new Map<string, Tool>();
  const all: Tool[] = [];
  const warnings: Diagnostic[] = [...parts.warnings];

  for (const tool of parts.codeTools) {
    byName.set(tool.name, tool);
    all.push(tool);
  }
  for (const tools of parts.pluginTools) {
    for (const tool of tools) {
      all.push(tool);
      byName.set(tool.qualifiedName, tool);
      const holder = byName.get(tool.name);
      if (holder === undefined) {
        byName.set(tool.name, tool);
        continue;
      }
      warnings.push({
        code: 'NAME_COLLISION',
        severity: 'warning',
        message:
          `tool '${tool.name}' is provided by both ${holder.plugin ? `plugin '${holder.plugin}'` : 'code'} and plugin ` +
          `'${tool.plugin}'; '${tool.name}' means ${holder.qualifiedName}, write '${tool.qualifiedName}' for the other`,
      });
    }
  }

  const former = parts.former;
  return Object.freeze({
    version: parts.version,
    warnings: Object.freeze(warnings),
    get: (name: string) => byName.get(name),
    has: (name: string) => byName.has(name),
    names: () => byName.keys(),
    tools: () => all,
    formerProvider: (name: string) => (byName.has(name) ? undefined : former.get(name)),
    inactiveProvider: (name: string) => (byName.has(name) ? undefined : parts.inactive?.get(name)),
    failedTool: (name: string) => (byName.has(name) ? undefined : parts.failed?.get(name)),
  });
}
