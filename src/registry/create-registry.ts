import { type Diagnostic, ToolchainError } from '../errors.js';
import { buildTool, type BuildSettings, type BuiltTool } from './build-tool.js';
import { createToolSet } from './tool-set.js';
import type { Registry, RegistryOptions, Tool, ToolDefinition, ToolOwner, ToolSet } from './types.js';

// The one mutable place tools live. Every change builds the new tools first and swaps them in
// with a single assignment, so a reader sees the old set or the new one, never a mix. Readers
// take `current()`: an immutable snapshot, built lazily and reused until the next change.

const MIB = 1024 * 1024;

interface PluginEntry {
  readonly version: string;
  readonly env: readonly string[];
  readonly tools: ReadonlyMap<string, BuiltTool>;
}

function withPointerPrefix(diagnostics: readonly Diagnostic[], prefix: string): Diagnostic[] {
  return diagnostics.map((d) => ({ ...d, pointer: `${prefix}${d.pointer ?? ''}` }));
}

export function createRegistry(options: RegistryOptions = {}): Registry {
  const settings: BuildSettings = {
    limitBytes: options.resultLimitBytes ?? MIB,
    env: options.env ?? process.env,
    now: options.now ?? Date.now,
    lazySchemas: options.lazySchemas ?? false,
  };
  const codeTools = new Map<string, BuiltTool>();
  const plugins = new Map<string, PluginEntry>();
  const former = new Map<string, string>();
  const inactive = new Map<string, { readonly plugin: string; readonly reason: string }>();
  const listeners = new Set<(tools: ToolSet) => void>();
  let version = 0;
  let snapshot: ToolSet | undefined;

  function current(): ToolSet {
    snapshot ??= createToolSet({
      version,
      codeTools: [...codeTools.values()].map((b) => b.tool),
      pluginTools: [...plugins.values()].map((p) => [...p.tools.values()].map((b) => b.tool)),
      former: new Map(former),
      inactive: new Map(inactive),
      warnings: [...codeTools.values(), ...[...plugins.values()].flatMap((p) => [...p.tools.values()])].flatMap((b) => b.warnings),
    });
    return snapshot;
  }

  function changed(): void {
    version += 1;
    snapshot = undefined;
    if (listeners.size === 0) return;
    const tools = current();
    for (const listener of [...listeners]) {
      try {
        listener(tools);
      } catch {
        // A listener's failure is its own; the registry has already changed for everyone.
      }
    }
  }

  function forget(plugin: string, names: Iterable<string>): void {
    for (const name of names) {
      former.set(name, plugin);
      former.set(`${plugin}/${name}`, plugin);
    }
  }

  function remember(plugin: string, names: Iterable<string>): void {
    for (const name of names) {
      former.delete(name);
      former.delete(`${plugin}/${name}`);
    }
  }

  function buildAll(plugin: string, version: string, defs: readonly ToolDefinition[], env: readonly string[]): Map<string, BuiltTool> {
    const owner: ToolOwner = { plugin, version, env };
    const built = new Map<string, BuiltTool>();
    const problems: Diagnostic[] = [];
    defs.forEach((def, index) => {
      try {
        const result = buildTool(def, owner, settings);
        if (built.has(result.tool.name)) {
          const message = `plugin '${plugin}' defines tool '${result.tool.name}' twice`;
          problems.push({ code: 'DUPLICATE_NAME', severity: 'error', message, pointer: `/tools/${index}/name` });
          return;
        }
        built.set(result.tool.name, { tool: result.tool, warnings: withPointerPrefix(result.warnings, `/tools/${index}`) });
      } catch (error) {
        if (!(error instanceof ToolchainError)) throw error;
        problems.push(...withPointerPrefix(error.diagnostics, `/tools/${index}`));
      }
    });
    if (problems.length > 0) {
      const detail = problems.map((p) => p.message).join('; ');
      throw new ToolchainError('PLUGIN_INVALID', `plugin '${plugin}' has invalid tools: ${detail}`, problems);
    }
    return built;
  }

  return {
    register(def: ToolDefinition, owner?: ToolOwner): Tool {
      if (!owner) {
        const built = buildTool(def, undefined, settings);
        codeTools.set(built.tool.name, built);
        changed();
        return built.tool;
      }
      const entry = plugins.get(owner.plugin);
      const env = [...new Set([...(entry?.env ?? []), ...(owner.env ?? [])])];
      const built = buildTool(def, { ...owner, env }, settings);
      const tools = new Map(entry?.tools);
      tools.set(built.tool.name, built);
      plugins.set(owner.plugin, { version: owner.version, env, tools });
      remember(owner.plugin, [built.tool.name]);
      changed();
      return built.tool;
    },

    unregister(name: string): boolean {
      const removed = codeTools.delete(name);
      if (removed) changed();
      return removed;
    },

    setPluginTools(plugin, version, defs, env = []) {
      const previous = plugins.get(plugin);
      if (defs === undefined) {
        if (!previous) return { tools: [], warnings: [] };
        plugins.delete(plugin);
        forget(plugin, previous.tools.keys());
        changed();
        return { tools: [], warnings: [] };
      }
      const tools = buildAll(plugin, version, defs, env);
      if (previous) forget(plugin, [...previous.tools.keys()].filter((name) => !tools.has(name)));
      remember(plugin, tools.keys());
      plugins.set(plugin, { version, env, tools });
      changed();
      const built = [...tools.values()];
      return { tools: built.map((b) => b.tool), warnings: built.flatMap((b) => b.warnings) };
    },

    current,

    setInactive(plugin, tools, reason) {
      for (const [name, entry] of [...inactive]) if (entry.plugin === plugin) inactive.delete(name);
      if (reason !== undefined) {
        for (const tool of tools) {
          inactive.set(tool, { plugin, reason });
          inactive.set(`${plugin}/${tool}`, { plugin, reason });
        }
      }
      snapshot = undefined;
    },

    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
