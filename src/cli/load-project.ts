import { basename, resolve } from 'node:path';
import type { DiskCache } from '../cache/index.js';
import { compileChainSet, createCompileCache, readChainFiles, readChainSources, type ChainSet, type ChainSource, type NameCatalogue } from '../compiler/index.js';
import type { Diagnostic } from '../common/errors.js';
import { inspectPlugins, type PluginInspection } from '../plugins/index.js';
import type { GlobalOptions } from './io.js';

// What the static commands (validate, graph, list) see of a project: the plugins folder checked
// without running any handler, and the chains folder compiled as one set against those tools, so
// that tool names, sub-chain references and name clashes are checked across files.

export interface Project {
  readonly chains: ChainSet;
  readonly plugins: PluginInspection;
  /** Problems found while reading chain files (unreadable, too large), before compiling. */
  readonly readProblems: readonly Diagnostic[];
}

/**
 * `extraFiles`: chain files to compile beside the folder's (plugin manifests among them are
 * skipped: the folder scan covers them). `disk`: where YAML parses are cached.
 */
export async function loadProject(globals: GlobalOptions, disk: DiskCache | 'off', extraFiles: readonly string[] = []): Promise<Project> {
  const cache = disk === 'off' ? undefined : disk;
  const [plugins, folder] = await Promise.all([inspectPlugins(globals.plugins, cache), readChainSources(globals.chains)]);
  const byFile = new Map<string, ChainSource>(folder.sources.map((s) => [resolve(s.file), s]));
  const extra = await readChainFiles(extraFiles.filter((f) => !isManifest(f)));
  for (const s of extra.sources) byFile.set(resolve(s.file), s);
  const tools: NameCatalogue = {
    has: (n) => plugins.toolNames.has(n),
    names: () => plugins.bareToolNames,
    signature: (n) => plugins.signatures.get(n),
    why: (n) => plugins.failedTools.get(n),
  };
  return { chains: compileChainSet([...byFile.values()], tools, createCompileCache(cache ? { disk: cache } : {})), plugins, readProblems: [...folder.diagnostics, ...extra.diagnostics] };
}

export function isManifest(file: string): boolean {
  return basename(file) === 'plugin.yaml';
}
