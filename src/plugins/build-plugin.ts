import type { Diagnostic } from '../common/errors.js';
import type { BuiltPlugin, Registry } from '../registry/types.js';
import type { FailedTool, LoadedPlugin, PluginLoad } from './load-plugin.js';

// A loaded plugin → its tools built by the registry, each schema compiled exactly once for this
// version (or only meta-checked, when the registry is not eager or the plugin's tools are an
// OpenAPI document's operations, which compile on first call), with every problem placed in
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
  const owner = { plugin: p.name, version: p.version, env: p.env };
  // Pointers from the registry count positions in the list it was given: back to manifest indices.
  const toManifest = (d: Diagnostic, indices: readonly number[]): Diagnostic => {
    const m = /^\/tools\/(\d+)(.*)$/.exec(d.pointer ?? '');
    if (!m) return d;
    const index = indices[Number(m[1])];
    // A source's tool that no manifest entry adjusts: placed at the source.
    if (index === -1) return { ...d, pointer: '/source' };
    return { ...d, pointer: `/tools/${index ?? m[1]}${m[2]}` };
  };
  let tools = p.tools;
  let indices = p.toolIndex;
  const failed: FailedTool[] = [...p.failedTools];
  const options = p.compileOnFirstCall === true ? { compileOnFirstCall: true } : undefined;
  let result = registry.buildPluginTools(owner, tools, options);
  if (!result.ok) {
    // A tool with a bad schema is left out on its own, like one whose handler does not load.
    const bad = new Set<number>();
    for (const d of result.diagnostics) {
      const m = /^\/tools\/(\d+)/.exec(d.pointer ?? '');
      if (!m) return { ok: false, name: p.name, diagnostics: [...p.warnings, ...result.diagnostics.map(inManifest)] };
      const k = Number(m[1]);
      bad.add(k);
      const diagnostic = inManifest(toManifest(d, indices));
      failed.push({ name: tools[k]?.name ?? '?', reason: d.message.replace(/^tool '[^']*':? ?/, ''), diagnostic });
    }
    const keep = tools.map((_, k) => k).filter((k) => !bad.has(k));
    tools = keep.map((k) => tools[k]!);
    indices = keep.map((k) => indices[k]!);
    result = registry.buildPluginTools(owner, tools, options);
    if (!result.ok) return { ok: false, name: p.name, diagnostics: [...p.warnings, ...result.diagnostics.map(inManifest)] };
  }
  const built = result.built;
  const warnings = [...p.warnings, ...built.warnings.map((d) => inManifest(toManifest(d, indices))), ...failed.map((f) => f.diagnostic)];
  return { ok: true, plugin: { ...p, tools, toolIndex: indices, failedTools: failed, built, warnings } };
}
