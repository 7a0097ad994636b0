import { compileText, hashText, type CompiledFile } from './compile-chain.js';

// Compiled files keyed by content hash (and file name, which diagnostics carry). The latest text
// of each file is also kept by name: re-reading an unchanged file costs one string comparison,
// not a hash of the whole text. Bounded so that a long-running engine that sees many edits does
// not keep every version.

const MAX_ENTRIES = 512;
const byHash = new Map<string, CompiledFile>();
const latest = new Map<string, { readonly text: string; readonly compiled: CompiledFile }>();

export function compileCached(text: string, file: string): CompiledFile {
  const last = latest.get(file);
  if (last && last.text === text) return last.compiled;
  const hash = hashText(text);
  const key = `${file}\0${hash}`;
  let compiled = byHash.get(key);
  if (!compiled) {
    compiled = compileText(text, file, hash);
    if (byHash.size >= MAX_ENTRIES) byHash.delete(byHash.keys().next().value!);
    byHash.set(key, compiled);
  }
  if (latest.size >= MAX_ENTRIES && !latest.has(file)) latest.delete(latest.keys().next().value!);
  latest.set(file, { text, compiled });
  return compiled;
}

export function clearCompileCache(): void {
  byHash.clear();
  latest.clear();
}
