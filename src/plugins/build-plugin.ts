import type { Diagnostic } from '../common/errors.js';
import type { BuiltPlugin, Registry } from '../registry/types.js';
import type { LoadedPlugin, PluginLoad } from './load-plugin.js';

// A loaded plugin → its tools built by the registry, each schema compiled exactly once for this
// version (or only meta-checked, when the registry is not eager), with every problem placed in
// the manifest (`/tools/<i>/parameters` → file:line:col). A bad schema fails the load, so the last
// good version keeps serving. What is built here is what gets installed, as often as the plugin's
// requirements come and go: nothing is compiled again.

export interface ReadyPlugin extends LoadedPlugin {
  readonly built: BuiltPlugin;
}

export type PluginReady =
  | { readonly ok: true; readonly plugin: ReadyPlugin }
  | { readonly ok: false; readonly name?: string; readonly diagnostics: readonly Diagnostic[] };

export function buildPlugin(registry: Pick<Registry, 'buildPluginTools'>, load: PluginLoad): PluginReady {
  if (!load.ok) return load;
  const p = load.plugin;
  const inManifest = (d: Diagnostic): Diagnostic => {
    const { line, col } = p.sourceMap.valueAt(d.pointer ?? '');
    return { ...d, file: p.manifestFile, line, col };
  };
  const result = registry.buildPluginTools({ plugin: p.name, version: p.version, env: p.env }, p.tools);
  if (!result.ok) return { ok: false, name: p.name, diagnostics: [...p.warnings, ...result.diagnostics.map(inManifest)] };
  return { ok: true, plugin: { ...p, built: result.built, warnings: [...p.warnings, ...result.built.warnings.map(inManifest)] } };
}
