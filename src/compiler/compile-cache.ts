import type { DiskCache } from '../cache/disk-cache.js';
import { compileText, hashText, type CompiledFile } from './compile-chain.js';

// Compiled files keyed by content hash (and file name, which diagnostics carry), kept by whoever
// made the cache (an engine, a CLI command): never shared between engines. A caller that read the
// file hashed it once as it read it (ChainSource.hash) and passes that hash: the look-up is then
// one Map.get, whatever the text's length. Without a hash, the latest text of each file is kept by
// name, and a text equal to it costs one string comparison (cheaper than hashing it again). Bounded so that a long-running engine that sees many edits does not keep
// every version. Plans hold closures, so they live in memory only; the disk cache, when given,
// keeps the slow part before them (the YAML parse).

const MAX_ENTRIES = 512;

export interface CompileCache {
  /** The compiled file for this text: compiled once, then a look-up (O(1) with `known.hash`). */
  compile(text: string, file: string, known?: KnownText): CompiledFile;
  /** Forgets every compiled file (what a benchmark of cold compiles needs). */
  clear(): void;
}

/** What the caller knows of a text already: its hash (hashText) and the size limit it is held to. */
export interface KnownText {
  readonly hash?: string | undefined;
  /** The largest text accepted (default: the loader's 1 MiB). */
  readonly maxBytes?: number | undefined;
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
    compile(text, file, known = {}) {
      const limit = known.maxBytes === undefined ? '' : `\0${known.maxBytes}`;
      if (known.hash !== undefined) {
        const hit = byHash.get(`${file}\0${known.hash}${limit}`);
        if (hit) return hit;
      } else if (known.maxBytes === undefined) {
        const last = latest.get(file);
        if (last && last.text === text) return last.compiled;
      }
      const hash = known.hash ?? hashText(text);
      const key = `${file}\0${hash}${limit}`;
      let compiled = byHash.get(key);
      if (!compiled) {
        compiled = compileText(text, file, hash, disk, known.maxBytes);
        if (byHash.size >= MAX_ENTRIES) byHash.delete(byHash.keys().next().value!);
        byHash.set(key, compiled);
      }
      if (known.maxBytes !== undefined) return compiled;
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
