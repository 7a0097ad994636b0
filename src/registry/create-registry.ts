import { type Diagnostic, ToolchainError } from '../common/errors.js';
import { buildTool, type BuildSettings, type BuiltTool } from './build-tool.js';
import { createSchemaCompiler } from './schema-compiler.js';
import { createToolSet } from './tool-set.js';
import type { BuiltPlugin, LoadMode, PluginBuild, PluginBuildOptions, PluginToolsResult, Registry, RegistryOptions, Tool, ToolDefinition, ToolOwner, ToolSet } from './types.js';

// The one mutable place tools live. Every change builds the new tools first and swaps them in
// with a single assignment, so a reader sees the old set or the new one, never a mix. Readers
// take `current()`: an immutable snapshot, built lazily and reused until the next change.
// A plugin's tools are built once per version (buildPluginTools) and installed as they are, as
// often as requirements come and go (installPluginTools): a schema is compiled once.

const MIB = 1024 * 1024;
const LOAD_MODES: readonly LoadMode[] = ['eager', 'lazy', 'static'];

interface PluginEntry {
  readonly version: string;
  readonly env: readonly string[];
  readonly tools: ReadonlyMap<string, BuiltTool>;
}

function withPointerPrefix(diagnostics: readonly Diagnostic[], prefix: string): Diagnostic[] {
  return diagnostics.map((d) => ({ ...d, pointer: `${prefix}${d.pointer ?? ''}` }));
}

function checkLoadMode(value: unknown): LoadMode {
  if (value === undefined) return 'eager';
  if (LOAD_MODES.includes(value as LoadMode)) return value as LoadMode;
  throw new ToolchainError('USAGE', `option 'load' must be one of ${LOAD_MODES.map((m) => `'${m}'`).join(', ')}, got ${JSON.stringify(value) ?? String(value)}`);
}

export function createRegistry(options: RegistryOptions = {}): Registry {
  const load = checkLoadMode(options.load);
  const schemas = options.schemas ?? createSchemaCompiler();
  const settings: BuildSettings = {
    limitBytes: options.resultLimitBytes ?? MIB,
    env: options.env ?? process.env,
    now: options.now ?? Date.now,
    load,
    schemas,
  };
  const codeTools = new Map<string, BuiltTool>();
  const plugins = new Map<string, PluginEntry>();
  /** The tools of each BuiltPlugin this registry made: only those may be installed (they carry its settings). */
  const ours = new WeakMap<BuiltPlugin, ReadonlyMap<string, BuiltTool>>();
  const former = new Map<string, string>();
  const inactive = new Map<string, { readonly plugin: string; readonly reason: string }>();
  const failed = new Map<string, { readonly plugin: string; readonly reason: string }>();
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
      failed: new Map(failed),
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

  function install(plugin: string, entry: PluginEntry): void {
    const previous = plugins.get(plugin);
    if (previous) forget(plugin, [...previous.tools.keys()].filter((name) => !entry.tools.has(name)));
    remember(plugin, entry.tools.keys());
    plugins.set(plugin, entry);
    changed();
  }

  function buildPluginTools(owner: ToolOwner, defs: readonly ToolDefinition[], options?: PluginBuildOptions): PluginBuild {
    const env = owner.env ?? [];
    const build: BuildSettings = options?.compileOnFirstCall === true && settings.load === 'eager' ? { ...settings, load: 'lazy' } : settings;
    const tools = new Map<string, BuiltTool>();
    const problems: Diagnostic[] = [];
    defs.forEach((def, index) => {
      try {
        const result = buildTool(def, { ...owner, env }, build);
        if (tools.has(result.tool.name)) {
          const message = `plugin '${owner.plugin}' defines tool '${result.tool.name}' twice`;
          problems.push({ code: 'DUPLICATE_NAME', severity: 'error', message, pointer: `/tools/${index}/name` });
          return;
        }
        tools.set(result.tool.name, { tool: result.tool, warnings: withPointerPrefix(result.warnings, `/tools/${index}`) });
      } catch (error) {
        if (!(error instanceof ToolchainError)) throw error;
        problems.push(...withPointerPrefix(error.diagnostics, `/tools/${index}`));
      }
    });
    if (problems.length > 0) return { ok: false, diagnostics: problems };
    const list = [...tools.values()];
    const result: BuiltPlugin = Object.freeze({
      plugin: owner.plugin,
      version: owner.version,
      env,
      tools: Object.freeze(list.map((b) => b.tool)),
      warnings: Object.freeze(list.flatMap((b) => b.warnings)),
    });
    ours.set(result, tools);
    return { ok: true, built: result };
  }

  function installPluginTools(plugin: BuiltPlugin): PluginToolsResult {
    const tools = ours.get(plugin);
    if (!tools) throw new TypeError(`plugin '${plugin.plugin}': these tools were not built by this registry`);
    install(plugin.plugin, { version: plugin.version, env: plugin.env, tools });
    return { tools: plugin.tools, warnings: plugin.warnings };
  }

  function removePluginTools(plugin: string): void {
    const previous = plugins.get(plugin);
    if (!previous) return;
    plugins.delete(plugin);
    forget(plugin, previous.tools.keys());
    changed();
  }

  return {
    load,
    schemas,

    register<A extends object = Record<string, unknown>>(typed: ToolDefinition<A>, owner?: ToolOwner): Tool {
      // Sound: the handler only ever sees arguments its `parameters` schema admitted (ToolHandler).
      const def = typed as unknown as ToolDefinition;
      if (!owner) {
        const made = buildTool(def, undefined, settings);
        codeTools.set(made.tool.name, made);
        changed();
        return made.tool;
      }
      const entry = plugins.get(owner.plugin);
      const env = [...new Set([...(entry?.env ?? []), ...(owner.env ?? [])])];
      const made = buildTool(def, { ...owner, env }, settings);
      const tools = new Map(entry?.tools);
      tools.set(made.tool.name, made);
      install(owner.plugin, { version: owner.version, env, tools });
      return made.tool;
    },

    unregister(name: string): boolean {
      const removed = codeTools.delete(name);
      if (removed) changed();
      return removed;
    },

    buildPluginTools,
    installPluginTools,
    removePluginTools,

    setPluginTools(plugin, version, defs, env = []) {
      if (defs === undefined) {
        removePluginTools(plugin);
        return { tools: [], warnings: [] };
      }
      const result = buildPluginTools({ plugin, version, env }, defs);
      if (!result.ok) {
        const detail = result.diagnostics.map((p) => p.message).join('; ');
        throw new ToolchainError('PLUGIN_INVALID', `plugin '${plugin}' has invalid tools: ${detail}`, result.diagnostics);
      }
      return installPluginTools(result.built);
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

    setFailedTools(plugin, failures) {
      for (const [name, entry] of [...failed]) if (entry.plugin === plugin) failed.delete(name);
      for (const f of failures) {
        failed.set(f.name, { plugin, reason: f.reason });
        failed.set(`${plugin}/${f.name}`, { plugin, reason: f.reason });
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
