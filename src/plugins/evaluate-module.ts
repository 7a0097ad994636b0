import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileFunction } from 'node:vm';
import { resolveLocal } from './resolve-local.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { IMPORT_META_PARAM, transformModule } from './transform-module.js';
import { importModule } from '../common/import-module.js';
import * as pluginApi from './plugin-api.js';

// Hot reload must not leak. Node's ESM loader keeps every module imported under a new URL
// forever, and `vm.runInThisContext` / `new Function` leave each distinct source in V8's
// compilation cache, which on Node 20 grows with every edit. So a plugin's own files are
// transformed to CommonJS-shaped code (transform-module.ts) and evaluated here with
// `vm.compileFunction`, which bypasses that cache: when nothing references a loaded version any
// more, all of it is garbage. Packages and builtins (bare specifiers) load through Node's own
// require, since they do not change while the engine runs. Node (from 20.19, the floor) requires
// ES-module packages too; only one with top-level await cannot be, and is imported beforehand.

const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname', IMPORT_META_PARAM];

/** The one package a plugin gets from the engine that loads it, never from its own folder (plugin-api.ts). */
const ENGINE_PACKAGE = 'toolchain/plugin';

/** Packages imported ahead of a module's evaluation, by resolved path (see preloadAsyncPackages). */
type Imported = Map<string, unknown>;

/** Packages: Node's require, or the namespace of one imported beforehand. */
function requirePackage(id: string, fromFile: string, imported: Imported): unknown {
  if (id === ENGINE_PACKAGE) return pluginApi;
  const nodeRequire = createRequire(fromFile);
  try {
    return nodeRequire(id);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ASYNC_MODULE') throw error;
    const namespace = imported.get(nodeRequire.resolve(id));
    if (namespace === undefined) throw error;
    return namespace;
  }
}

interface ModuleRecord {
  exports: unknown;
  readonly filename: string;
  readonly id: string;
  loaded: boolean;
}

/** One load: modules are shared (and cycles resolved) within it, never across loads. */
class LoadSession {
  private readonly records = new Map<string, ModuleRecord>();
  private readonly imported: Imported = new Map();
  constructor(
    private readonly cache: DiskCache | undefined,
    private readonly sources: SourceSnapshot | undefined,
  ) {}

  /** A module's text: the version's copy if it has one, else the file's, which the copy then keeps. */
  private read(file: string): string {
    const kept = this.sources?.get(file);
    if (kept !== undefined) return kept;
    const source = readFileSync(file, 'utf8');
    this.sources?.set(file, source);
    return source;
  }

  private begin(file: string): { record: ModuleRecord; source: string } | { done: unknown } {
    const existing = this.records.get(file);
    if (existing) return { done: existing.exports };
    const source = this.read(file);
    const record: ModuleRecord = { exports: {}, filename: file, id: file, loaded: false };
    this.records.set(file, record);
    if (extname(file) === '.json') {
      record.exports = JSON.parse(source) as unknown;
      record.loaded = true;
      return { done: record.exports };
    }
    return { record, source };
  }

  private finish(record: ModuleRecord): unknown {
    record.loaded = true;
    return record.exports;
  }

  private requireFrom(fromFile: string): NodeJS.Require {
    const require = ((id: string) => {
      const local = resolveLocal(id, fromFile, this.sources?.has.bind(this.sources));
      return local ? this.evaluateSync(local) : requirePackage(id, fromFile, this.imported);
    }) as NodeJS.Require;
    const nodeRequire = createRequire(fromFile);
    return Object.assign(require, { resolve: nodeRequire.resolve, cache: {}, main: undefined, extensions: nodeRequire.extensions });
  }

  private args(record: ModuleRecord): unknown[] {
    const file = record.filename;
    const meta = { url: pathToFileURL(file).href, filename: file, dirname: dirname(file) };
    return [record.exports, this.requireFrom(file), record, file, dirname(file), meta];
  }

  /** ESM-style evaluation: top-level await allowed, imports awaited in order. */
  async evaluate(file: string): Promise<unknown> {
    const started = this.begin(file);
    if ('done' in started) return started.done;
    const { record, source } = started;
    await this.preloadAsyncPackages(source, file);
    const code = transformModule(file, source, this.cache);
    // compileFunction has no async option: an async arrow inside carries top-level await.
    const run = compileFunction(`return (async () => {${code}\n})();`, PARAMS, { filename: file });
    await (run.apply(record.exports, this.args(record)) as Promise<unknown>);
    return this.finish(record);
  }

  /**
   * The transformed code requires packages synchronously, and Node cannot require an ES module
   * with top-level await: such a package is imported here, before the module runs, and its
   * namespace handed to the require that asks for it (marked as an ES module, as Node's own
   * require of an ES module marks it, so that default imports find `default`).
   */
  private async preloadAsyncPackages(source: string, file: string): Promise<void> {
    const nodeRequire = createRequire(file);
    for (const m of source.matchAll(/\bfrom\s+['"]([^'"./][^'"]*)['"]|\bimport\s*\(\s*['"]([^'"./][^'"]*)['"]/g)) {
      const id = m[1] ?? m[2]!;
      if (id.startsWith('node:') || id === ENGINE_PACKAGE) continue;
      try {
        nodeRequire(id);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ASYNC_MODULE') continue; // reported when the module runs
        const resolved = nodeRequire.resolve(id);
        if (this.imported.has(resolved)) continue;
        const namespace = await importModule<object>(pathToFileURL(resolved).href);
        this.imported.set(resolved, Object.freeze({ __esModule: true, ...namespace }));
      }
    }
  }

  /** `require()` of a local file from CommonJS code: synchronous, so no top-level await. */
  evaluateSync(file: string): unknown {
    const started = this.begin(file);
    if ('done' in started) return started.done;
    const { record, source } = started;
    const code = transformModule(file, source, this.cache);
    const run = compileFunction(code, PARAMS, { filename: file });
    run.apply(record.exports, this.args(record));
    return this.finish(record);
  }
}

export interface ModuleLoader {
  /**
   * Evaluate a module file afresh (`.ts`, `.mts`, `.cts`, `.js` ESM or CommonJS, `.mjs`, `.cjs`),
   * with its local imports evaluated afresh too, once per loader. Returns its exports: an object,
   * or whatever a CommonJS module assigned to `module.exports`. Throws what the module throws.
   */
  evaluate(file: string): Promise<unknown>;
}

/**
 * The text of each module file one version of a plugin read (by absolute path). A loader given
 * one reads a file from it when it holds the file, and adds each file it reads from disk; the
 * workers of an isolated plugin share theirs, so that a worker started after the files changed
 * on disk still runs the version its runs started with.
 */
export interface SourceSnapshot {
  get(file: string): string | undefined;
  has(file: string): boolean;
  set(file: string, source: string): unknown;
}

export interface ModuleLoaderOptions {
  /** Where transformed modules are kept between processes (default: nowhere). */
  readonly cache?: DiskCache;
  /** The version's module texts (default: each file is read from disk). */
  readonly sources?: SourceSnapshot;
}

/** A loader for one plugin load: the plugin's modules share instances with each other only. */
export function createModuleLoader(options: ModuleLoaderOptions = {}): ModuleLoader {
  const session = new LoadSession(options.cache, options.sources);
  return { evaluate: (file) => session.evaluate(file) };
}
