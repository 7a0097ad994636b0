import { resolve } from 'node:path';
import { compileChainSet, readChainFiles, readChainSources, type ChainSet, type ChainSource, type NameCatalogue } from '../compiler/index.js';
import type { Diagnostic } from '../errors.js';
import type { GlobalOptions } from './io.js';

// What the static commands (validate, graph, list) see of a project: the chains folder compiled
// as one set, so that sub-chain references and name clashes are checked across files.

export interface Project {
  readonly chains: ChainSet;
  /** Problems found while reading files (unreadable, too large), before compiling. */
  readonly readProblems: readonly Diagnostic[];
}

export async function loadProject(globals: GlobalOptions, extraFiles: readonly string[] = [], tools?: NameCatalogue): Promise<Project> {
  const { sources, diagnostics } = await readChainSources(globals.chains);
  const byFile = new Map<string, ChainSource>(sources.map((s) => [resolve(s.file), s]));
  const extra = await readChainFiles(extraFiles);
  for (const s of extra.sources) byFile.set(resolve(s.file), s);
  const readProblems = [...diagnostics, ...extra.diagnostics];
  return { chains: compileChainSet([...byFile.values()], tools), readProblems };
}
