import { realpath } from 'node:fs/promises';
import { relative } from 'node:path';
import { type Diagnostic, type ErrorCode, hasErrors, ToolchainError } from '../common/errors.js';
import type { SourceMap } from '../loader/index.js';
import { buildTool } from '../registry/build-tool.js';
import type { ToolDefinition } from '../registry/types.js';
import { createModuleLoader, type ModuleLoader } from './evaluate-module.js';
import { pickExport } from './pick-export.js';
import type { Requirement } from './parse-requirement.js';
import { readManifest, type PluginManifest } from './read-manifest.js';
import { resolveHandler } from './resolve-handler.js';

// One plugin folder → its tool definitions, or every reason it cannot load. Nothing here touches
// the registry: the host decides what becomes active (requirements) and swaps it in one step.

export interface LoadedPlugin {
  /** The folder as the host names it. */
  readonly dir: string;
  readonly manifestFile: string;
  readonly name: string;
  readonly version: string;
  readonly capabilities: readonly string[];
  readonly requirements: readonly Requirement[];
  readonly env: readonly string[];
  readonly tools: readonly ToolDefinition[];
  /** Non-fatal problems (e.g. an unknown JSON Schema keyword), placed in the manifest. */
  readonly warnings: readonly Diagnostic[];
}

export type PluginLoad =
  | { readonly ok: true; readonly plugin: LoadedPlugin }
  | { readonly ok: false; readonly name?: string; readonly diagnostics: readonly Diagnostic[] };

/** A module that never finishes loading (a top-level await that hangs) must not stall reloads. */
const IMPORT_TIMEOUT_MS = 10_000;

type Tool = NonNullable<PluginManifest['tools']>[number];

function place(file: string, sourceMap: SourceMap, pointer: string, code: ErrorCode, message: string, severity: Diagnostic['severity'] = 'error'): Diagnostic {
  const { line, col } = sourceMap.valueAt(pointer);
  return { code, severity, message, file, pointer, line, col };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish loading within ${ms / 1000}s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Stands in for a handler that a static check located but did not import. */
const NOT_IMPORTED: ToolDefinition['handler'] = () => {
  throw new ToolchainError('HANDLER_LOAD', 'this handler was checked statically and not imported');
};

type HandlerOutcome = { ok: true; handler: ToolDefinition['handler'] } | { ok: false; code: ErrorCode; message: string };

/**
 * Locates a tool's handler (refusing escapes) and imports it: now, on the tool's first call
 * (`defer`), or never (no loader: a static check).
 */
async function loadHandler(
  loader: ModuleLoader | undefined,
  realDir: string,
  tool: Tool,
  modules: Map<string, Promise<unknown>>,
  defer: boolean,
): Promise<HandlerOutcome> {
  const location = await resolveHandler(realDir, tool.name, tool.handler);
  if (!location.ok) return location;
  if (!loader) return { ok: true, handler: NOT_IMPORTED };
  const load = (): Promise<HandlerOutcome> => importHandler(loader, realDir, tool, location.file, location.exportName, modules);
  if (!defer) return load();
  let pending: Promise<ToolDefinition['handler']> | undefined;
  const handler: ToolDefinition['handler'] = (args, ctx) => {
    pending ??= load().then((loaded) => {
      if (loaded.ok) return loaded.handler;
      throw new ToolchainError('HANDLER_LOAD', loaded.message);
    });
    return pending.then((h) => h(args, ctx));
  };
  return { ok: true, handler };
}

async function importHandler(
  loader: ModuleLoader,
  realDir: string,
  tool: Tool,
  file: string,
  exportName: string | undefined,
  modules: Map<string, Promise<unknown>>,
): Promise<HandlerOutcome> {
  const shown = relative(realDir, file);
  let pending = modules.get(file);
  if (!pending) {
    pending = withTimeout(loader.evaluate(file), IMPORT_TIMEOUT_MS, shown);
    modules.set(file, pending);
  }
  let exports: unknown;
  try {
    exports = await pending;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, code: 'HANDLER_LOAD', message: `tool '${tool.name}': ${shown} failed to load: ${message}` };
  }
  const picked = pickExport(exports, tool.name, exportName);
  if (!picked.ok) return { ok: false, code: 'HANDLER_LOAD', message: `tool '${tool.name}': ${shown}: ${picked.message}` };
  return { ok: true, handler: picked.handler };
}

function definition(tool: Tool, handler: ToolDefinition['handler']): ToolDefinition {
  return {
    name: tool.name,
    handler,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
    ...(tool.returns !== undefined ? { returns: tool.returns } : {}),
    ...(tool.timeout !== undefined ? { timeout: tool.timeout } : {}),
    ...(tool.dangerous !== undefined ? { dangerous: tool.dangerous } : {}),
    ...(tool.truncate !== undefined ? { truncate: tool.truncate } : {}),
    ...(tool.cache !== undefined ? { cache: tool.cache } : {}),
    ...(tool.circuit_breaker !== undefined ? { circuit_breaker: tool.circuit_breaker } : {}),
  };
}

/**
 * Build each tool once here, so a bad JSON Schema fails the load (and keeps the old version).
 * With `lazySchemas` the schemas are only checked against the meta-schema, which is enough to
 * refuse a broken one and costs microseconds; compiling also reports strict-mode warnings.
 */
function checkTools(plugin: string, version: string, env: readonly string[], defs: readonly ToolDefinition[], file: string, sourceMap: SourceMap, lazySchemas: boolean): { errors: Diagnostic[]; warnings: Diagnostic[] } {
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  defs.forEach((def, index) => {
    try {
      const built = buildTool(def, { plugin, version, env }, { limitBytes: 1, env: {}, now: Date.now, lazySchemas });
      for (const w of built.warnings) warnings.push(place(file, sourceMap, `/tools/${index}${w.pointer ?? ''}`, w.code, w.message, 'warning'));
    } catch (error) {
      if (!(error instanceof ToolchainError)) throw error;
      for (const d of error.diagnostics) errors.push(place(file, sourceMap, `/tools/${index}${d.pointer ?? ''}`, d.code, d.message));
    }
  });
  return { errors, warnings };
}

export interface LoadPluginOptions {
  /** See PluginHostOptions.lazy: schemas only meta-checked, handlers imported on first call. */
  readonly lazy?: boolean;
  /**
   * false: locate every handler (and refuse escapes) without importing it — what `toolchain
   * validate` does, so that checking a project never runs its code. The tools it returns cannot
   * be called. Default true.
   */
  readonly importHandlers?: boolean;
}

export async function loadPlugin(dir: string, options: LoadPluginOptions = {}): Promise<PluginLoad> {
  const read = await readManifest(dir);
  const { manifest, sourceMap, file } = read;
  if (!manifest || !sourceMap) return { ok: false, diagnostics: read.diagnostics };
  const name = manifest.name;

  let realDir: string;
  try {
    realDir = await realpath(dir);
  } catch (error) {
    return { ok: false, name, diagnostics: [{ code: 'FILE_UNREADABLE', severity: 'error', message: `cannot read plugin folder: ${(error as Error).message}`, file }] };
  }

  const loader = options.importHandlers === false ? undefined : createModuleLoader();
  const modules = new Map<string, Promise<unknown>>();
  const tools = manifest.tools ?? [];
  const diagnostics: Diagnostic[] = [...read.diagnostics];
  const defs: ToolDefinition[] = [];
  // In manifest order, one at a time: module side effects run in a predictable order.
  for (const [index, tool] of tools.entries()) {
    const loaded = await loadHandler(loader, realDir, tool, modules, options.lazy === true);
    if (loaded.ok) defs.push(definition(tool, loaded.handler));
    else diagnostics.push(place(file, sourceMap, tool.handler !== undefined ? `/tools/${index}/handler` : `/tools/${index}`, loaded.code, loaded.message));
  }
  if (hasErrors(diagnostics)) return { ok: false, name, diagnostics };

  const env = manifest.env ?? [];
  const checked = checkTools(name, manifest.version, env, defs, file, sourceMap, options.lazy === true || options.importHandlers === false);
  if (checked.errors.length > 0) return { ok: false, name, diagnostics: [...diagnostics, ...checked.errors] };

  return {
    ok: true,
    plugin: {
      dir,
      manifestFile: file,
      name,
      version: manifest.version,
      capabilities: manifest.capabilities ?? [],
      requirements: read.requirements,
      env,
      tools: defs,
      warnings: [...diagnostics, ...checked.warnings],
    },
  };
}
