import { join } from 'node:path';
import type { Diagnostic } from '../common/errors.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { createRegistry } from '../registry/create-registry.js';
import { buildPlugin } from './build-plugin.js';
import { loadPlugin } from './load-plugin.js';
import { listPluginFolders } from './plugin-folders.js';
import { readManifest } from './read-manifest.js';
import { resolveRequirements, type Candidate } from './requirements.js';
import type { PluginState } from './types.js';
import type { ToolSignature } from '../compiler/flow/index.js';
import type { ToolDefinition } from '../registry/types.js';

// A static look at a plugins folder, for `validate` and `list`: manifests, handler locations,
// schemas and requirements are checked, but no handler is imported, so checking a project never
// runs its code and stays fast. The same load and build steps as the engine's plugin host, with a
// registry of its own in the `static` mode (schemas meta-checked, nothing installed).

export interface PluginReport {
  readonly name: string;
  readonly version?: string;
  readonly dir: string;
  /**
   * `ok`: every tool it declares would serve; `partial`: some of them have no working handler
   * (those are in `failedTools`); `error`: it would serve nothing (no tool loads, or the plugin
   * does not); `inactive`: its requirements are not met.
   */
  readonly status: Exclude<PluginState, 'active'> | 'ok' | 'partial';
  /** Bare tool names with their descriptions and flags. */
  readonly tools: readonly { readonly name: string; readonly description: string; readonly dangerous: boolean }[];
  /** The tools it declares whose handler does not load, and why. */
  readonly failedTools: readonly { readonly name: string; readonly reason: string }[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface PluginInspection {
  readonly plugins: readonly PluginReport[];
  /** Tools of the plugins that would be active, by bare and by `plugin/tool` name. */
  readonly toolNames: ReadonlySet<string>;
  /** The same tools by bare name only: what suggestions offer. */
  readonly bareToolNames: ReadonlySet<string>;
  /** Their schemas, by bare and by `plugin/tool` name, for the data-flow check. */
  readonly signatures: ReadonlyMap<string, ToolSignature>;
  /** Tools declared by a plugin that failed to load, by bare and qualified name: why, in words. */
  readonly failedTools: ReadonlyMap<string, string>;
}

/** `cache`: where manifests' parses are kept (default: nowhere). */
export async function inspectPlugins(dir: string, cache?: DiskCache): Promise<PluginInspection> {
  const entries = await listPluginFolders(dir);
  const registry = createRegistry({ load: 'static' });
  const options = { mode: 'static' as const, ...(cache ? { cache } : {}) };
  const loads = await Promise.all(entries.map(async (e) => buildPlugin(registry, await loadPlugin(join(dir, e), options))));
  const candidates: Candidate[] = [];
  loads.forEach((load, k) => {
    if (!load.ok) return;
    const p = load.plugin;
    candidates.push({ key: entries[k]!, name: p.name, version: p.version, capabilities: p.capabilities, requirements: p.requirements, file: p.manifestFile });
  });
  const resolution = resolveRequirements(candidates);
  const toolNames = new Set<string>();
  const bareToolNames = new Set<string>();
  const signatures = new Map<string, ToolSignature>();
  const failedTools = new Map<string, string>();
  const sign = (t: ToolDefinition): ToolSignature => ({ ...(t.parameters ? { parameters: t.parameters } : {}), ...(t.returns ? { returns: t.returns } : {}) });
  /** Bare tool name → the active plugin that has it, first in folder order (as the engine registers them). */
  const holders = new Map<string, string>();
  const collisions = new Map<number, { index: number; tool: string; holder: string }[]>();
  const plugins = loads.map((load, k): PluginReport => {
    const folder = join(dir, entries[k]!);
    if (!load.ok) return { name: load.name ?? entries[k]!, dir: folder, status: 'error', tools: [], failedTools: [], diagnostics: load.diagnostics };
    const p = load.plugin;
    const why = resolution.get(entries[k]!) ?? [];
    const tools = p.tools.map((t) => ({ name: t.name, description: t.description ?? '', dangerous: t.dangerous === true }));
    if (!why.length) {
      for (const f of p.failedTools) {
        const reason = `declared by plugin '${p.name}', failed to load: ${f.reason}`;
        if (!failedTools.has(f.name)) failedTools.set(f.name, reason);
        failedTools.set(`${p.name}/${f.name}`, reason);
      }
      tools.forEach((t, index) => {
        toolNames.add(t.name).add(`${p.name}/${t.name}`);
        bareToolNames.add(t.name);
        if (!signatures.has(t.name)) signatures.set(t.name, sign(p.tools[index]!));
        signatures.set(`${p.name}/${t.name}`, sign(p.tools[index]!));
        const holder = holders.get(t.name);
        if (holder === undefined) holders.set(t.name, p.name);
        else collisions.set(k, [...(collisions.get(k) ?? []), { index, tool: t.name, holder }]);
      });
    }
    const failed = p.failedTools.map((f) => ({ name: f.name, reason: f.reason }));
    const status = why.length ? 'inactive' : failed.length === 0 ? 'ok' : tools.length === 0 ? 'error' : 'partial';
    return { name: p.name, version: p.version, dir: folder, status, tools, failedTools: failed, diagnostics: [...p.warnings, ...why] };
  });
  for (const [k, list] of collisions) {
    const report = plugins[k]!;
    plugins[k] = { ...report, diagnostics: [...report.diagnostics, ...(await collisionWarnings(report, list))] };
  }
  return { plugins, toolNames, bareToolNames, signatures, failedTools };
}

/**
 * The warning docs/guide/plugins.md promises when two plugins provide one bare tool name: the first plugin
 * (folder order) keeps the bare name, the other stays reachable as `plugin/tool`. Placed at the
 * second plugin's tool name; the manifest is read again for that, only when there is a clash.
 */
async function collisionWarnings(report: PluginReport, list: readonly { index: number; tool: string; holder: string }[]): Promise<Diagnostic[]> {
  const { sourceMap, file } = await readManifest(report.dir);
  return list.map(({ index, tool, holder }) => {
    const pointer = `/tools/${index}/name`;
    const at = sourceMap?.valueAt(pointer) ?? { line: 1, col: 1 };
    return {
      code: 'NAME_COLLISION',
      severity: 'warning',
      message: `tool '${tool}' is also provided by plugin '${holder}', which comes first and keeps the name '${tool}'; call this one '${report.name}/${tool}'`,
      file,
      pointer,
      line: at.line,
      col: at.col,
    };
  });
}
