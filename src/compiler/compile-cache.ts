import type { DiskCache } from '../cache/disk-cache.js';
import { compileText, hashText, type CompiledFile } from './compile-chain.js';

// Compiled files keyed by content hash (and file name, which diagnostics carry), kept by whoever
// made the cache (an engine, a CLI command): never shared between engines. The latest text of
// each file is also kept by name: re-reading an unchanged file costs one string comparison, not a
// hash of the whole text. Bounded so that a long-running engine that sees many edits does not keep
// every version. Plans hold closures, so they live in memory only; the disk cache, when given,
// keeps the slow part before them (the YAML parse).

const MAX_ENTRIES = 512;

export interface CompileCache {
  /** The compiled file for this text: compiled once, then a look-up. */
  compile(text: string, file: string): CompiledFile;
  /** Forgets every compiled file (what a benchmark of cold compiles needs). */
  clear(): void;
}

export interface CompileCacheOptions {
  /** Where YAML parses are kept between processes (default: nowhere). */
  readonly disk?: DiskCache;
}

export function createCompileCache(options: CompileCacheOptions = {}): CompileCache {
  const { disk } = options;
  const byHash = new Map<string, CompiledFile>();
  const latest = new Map<string, { readonly text: string; readonly compiled: CompiledFile }>();
  return {
    compile(text, file) {
      const last = latest.get(file);
      if (last && last.text === text) return last.compiled;
      const hash = hashText(text);
      const key = `${file}\0${hash}`;
      let compiled = byHash.get(key);
      if (!compiled) {
        compiled = compileText(text, file, hash, disk);
        if (byHash.size >= MAX_ENTRIES) byHash.delete(byHash.keys().next().value!);
        byHash.set(key, compiled);
      }
      if (latest.size >= MAX_ENTRIES && !latest.has(file)) latest.delete(latest.keys().next().value!);
      latest.set(file, { text, compiled });
      return compiled;
    },
    clear() {
      byHash.clear();
      latest.clear();
    },
  };
}
