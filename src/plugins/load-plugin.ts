import { realpath } from 'node:fs/promises';
import { relative } from 'node:path';
import { raceTimeout } from '../common/race.js';
import { type Diagnostic, type ErrorCode, hasErrors, ToolchainError } from '../common/errors.js';
import type { SourceMap } from '../loader/index.js';
import type { DiskCache } from '../cache/disk-cache.js';
import type { LoadMode, ToolDefinition } from '../registry/types.js';
import type { LogEntry } from '../run-model/events.js';
import { createModuleLoader, type ModuleLoader } from './evaluate-module.js';
import { pickExport } from './pick-export.js';
import type { Requirement } from './parse-requirement.js';
import { readManifest, type PluginManifest, type ReadManifest } from './read-manifest.js';
import { loadSource } from './sources/load-source.js';
import type { SourceSessions } from './sources/source-sessions.js';
import { resolveHandler } from './resolve-handler.js';
import { isolateHandlers } from './isolation/isolate-handlers.js';
import { workerEnvironment } from './isolation/worker-env.js';
import { DEFAULT_ISOLATION, stricter, type IsolationLevel, type IsolationSettings } from './isolation/level.js';

// One plugin folder → its tool definitions, or every reason it cannot load. Nothing here touches
// the registry or compiles a schema: the host has the registry build the tools once
// (build-plugin.ts), decides what becomes active (requirements) and swaps it in one step.

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
  /** By position in `tools`: the tool's index in the manifest (tools that failed to load are left out). */
  readonly toolIndex: readonly number[];
  /** Tools the manifest declares that failed to load, and why: the rest of the plugin still serves. */
  readonly failedTools: readonly FailedTool[];
  /** Non-fatal problems found reading the manifest, placed in it. */
  readonly warnings: readonly Diagnostic[];
  /** The manifest's positions, to place later diagnostics (`/tools/<i>/…`) in it. */
  readonly sourceMap: SourceMap;
  /** Where its handlers run: the manifest's `isolation`, raised to the engine's minimum. */
  readonly isolation: IsolationLevel;
  /** With isolation: ends its workers once idle (call when this version is replaced or removed). */
  readonly retire?: () => void;
  /** Its tools compile their schemas on first call whatever the load mode (an OpenAPI document's many operations). */
  readonly compileOnFirstCall?: boolean;
}

export interface FailedTool {
  readonly name: string;
  /** One sentence: why it did not load. */
  readonly reason: string;
  /** Where in the manifest, as an error. */
  readonly diagnostic: Diagnostic;
}

export type PluginLoad =
  | { readonly ok: true; readonly plugin: LoadedPlugin }
  | { readonly ok: false; readonly name?: string; readonly diagnostics: readonly Diagnostic[] };

/** A module that never finishes loading (a top-level await that hangs) must not stall reloads. */
const IMPORT_TIMEOUT_MS = 10_000;

type Tool = NonNullable<PluginManifest['tools']>[number];

function place(file: string, sourceMap: SourceMap, pointer: string, code: ErrorCode, message: string): Diagnostic {
  const { line, col } = sourceMap.valueAt(pointer);
  return { code, severity: 'error', message, file, pointer, line, col };
}

/** Stands in for a handler that a static check located but did not import. */
const NOT_IMPORTED: ToolDefinition['handler'] = () => {
  throw new ToolchainError('HANDLER_LOAD', 'this handler was checked statically and not imported');
};

type HandlerOutcome = { ok: true; handler: ToolDefinition['handler'] } | { ok: false; code: ErrorCode; message: string };

/**
 * Locates a tool's handler (refusing escapes) and imports it as the mode says: now (`eager`), on
 * the tool's first call (`lazy`), or never (`static`).
 */
async function loadHandler(
  loader: ModuleLoader,
  realDir: string,
  tool: Tool,
  modules: Map<string, Promise<unknown>>,
  mode: LoadMode,
): Promise<HandlerOutcome> {
  const location = await resolveHandler(realDir, tool.name, tool.handler);
  if (!location.ok) return location;
  if (mode === 'static') return { ok: true, handler: NOT_IMPORTED };
  const load = (): Promise<HandlerOutcome> => importHandler(loader, realDir, tool, location.file, location.exportName, modules);
  if (mode === 'eager') return load();
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
    pending = raceTimeout(loader.evaluate(file), IMPORT_TIMEOUT_MS, () => new Error(`${shown} did not finish loading within ${IMPORT_TIMEOUT_MS / 1000}s`));
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

export interface LoadPluginOptions {
  /**
   * When handlers are imported (see LoadMode): `eager` now (the default), `lazy` on each tool's
   * first call, `static` never (every handler is still located and escapes refused; the tools
   * cannot be called): what `toolchain validate` does, so that checking a project runs no code.
   */
  readonly mode?: LoadMode;
  /** Where the manifest's parse and the modules' transforms are cached (default: nowhere). */
  readonly cache?: DiskCache;
  /** The engine's isolation floor and worker limits (default: none, each manifest decides). */
  readonly isolation?: IsolationSettings;
  /** Where an isolated plugin's output that belongs to no call goes (run_id and step empty; fields name the plugin and stream). */
  readonly log?: (entry: LogEntry) => void;
  /** The manifest, when the caller has read it already. */
  readonly read?: ReadManifest;
  /** A plugin host's running MCP servers (see SourceSessions); without it a server lives as long as the plugin version. */
  readonly sessions?: SourceSessions;
  /** A source's tools changed on their own (an MCP server's list_changed): the caller reloads the plugin. */
  readonly onSourceChanged?: () => void;
  /** Where a source reads environment variables (an MCP server's `env` and `headers`, the address policy's allow list); default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export async function loadPlugin(dir: string, options: LoadPluginOptions = {}): Promise<PluginLoad> {
  const mode = options.mode ?? 'eager';
  const read = options.read ?? (await readManifest(dir, options.cache));
  const { manifest, sourceMap, file } = read;
  if (!manifest || !sourceMap) return { ok: false, diagnostics: read.diagnostics };
  const name = manifest.name;

  let realDir: string;
  try {
    realDir = await realpath(dir);
  } catch (error) {
    return { ok: false, name, diagnostics: [{ code: 'FILE_UNREADABLE', severity: 'error', message: `cannot read plugin folder: ${(error as Error).message}`, file }] };
  }

  if (manifest.source) return loadFromSource(dir, read, manifest, sourceMap, realDir, options);
  const tools = manifest.tools ?? [];
  const settings = options.isolation ?? DEFAULT_ISOLATION;
  const isolation = stricter(manifest.isolation ?? 'none', settings.minimum);
  const diagnostics: Diagnostic[] = [...read.diagnostics];
  const defs: ToolDefinition[] = [];
  const toolIndex: number[] = [];
  const failedTools: FailedTool[] = [];
  let retire: (() => void) | undefined;
  // A tool whose handler does not load is left out on its own; the plugin's other tools still serve.
  const take = (index: number, tool: Tool, loaded: HandlerOutcome): void => {
    if (loaded.ok) {
      defs.push(definition(tool, loaded.handler));
      toolIndex.push(index);
    } else {
      const diagnostic = place(file, sourceMap, tool.handler !== undefined ? `/tools/${index}/handler` : `/tools/${index}`, loaded.code, loaded.message);
      const prefix = `tool '${tool.name}': `;
      failedTools.push({ name: tool.name, reason: loaded.message.startsWith(prefix) ? loaded.message.slice(prefix.length) : loaded.message, diagnostic });
    }
  };
  if (isolation !== 'none' && mode !== 'static') {
    // The plugin's code runs in its workers only, never in this thread.
    const sink = options.log;
    const log = (message: string, fields: Record<string, unknown>): void => sink?.({ timestamp: Date.now(), run_id: '', step: '', attempt: 0, message, fields });
    const env = workerEnvironment(manifest.env ?? [], options.env ?? process.env);
    const isolated = await isolateHandlers({ plugin: name, realDir, kind: isolation, settings, mode, tools, importTimeoutMs: IMPORT_TIMEOUT_MS, env, log, ...(options.cache ? { cacheDir: options.cache.dir } : {}) });
    isolated.outcomes.forEach((loaded, index) => take(index, tools[index]!, loaded));
    retire = isolated.retire;
  } else {
    const loader = createModuleLoader(options.cache ? { cache: options.cache } : {});
    const modules = new Map<string, Promise<unknown>>();
    // In manifest order, one at a time: module side effects run in a predictable order.
    for (const [index, tool] of tools.entries()) take(index, tool, await loadHandler(loader, realDir, tool, modules, mode));
  }
  if (hasErrors(diagnostics)) {
    retire?.();
    return { ok: false, name, diagnostics };
  }

  return {
    ok: true,
    plugin: {
      dir,
      manifestFile: file,
      name,
      version: manifest.version,
      capabilities: manifest.capabilities ?? [],
      requirements: read.requirements,
      env: manifest.env ?? [],
      tools: defs,
      toolIndex,
      failedTools,
      warnings: diagnostics,
      sourceMap,
      isolation,
      ...(retire ? { retire } : {}),
    },
  };
}

/** A plugin whose tools come from an MCP server or an OpenAPI document (sources/load-source.ts). */
async function loadFromSource(dir: string, read: ReadManifest, manifest: PluginManifest, sourceMap: SourceMap, realDir: string, options: LoadPluginOptions): Promise<PluginLoad> {
  const sink = options.log;
  const log = (message: string, fields: Record<string, unknown>): void => sink?.({ timestamp: Date.now(), run_id: '', step: '', attempt: 0, message, fields });
  const loaded = await loadSource(manifest, read.file, sourceMap, realDir, {
    mode: options.mode ?? 'eager',
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
    ...(options.onSourceChanged ? { onSourceChanged: options.onSourceChanged } : {}),
    ...(options.env ? { env: options.env } : {}),
    log,
  });
  if (!loaded.ok) return { ok: false, name: manifest.name, diagnostics: [...read.diagnostics, ...loaded.diagnostics] };
  return {
    ok: true,
    plugin: {
      dir,
      manifestFile: read.file,
      name: manifest.name,
      version: manifest.version,
      capabilities: manifest.capabilities ?? [],
      requirements: read.requirements,
      env: manifest.env ?? [],
      tools: loaded.defs,
      toolIndex: loaded.toolIndex,
      failedTools: [],
      warnings: [...read.diagnostics, ...loaded.warnings],
      sourceMap,
      isolation: 'none',
      ...(loaded.retire ? { retire: loaded.retire } : {}),
      ...(manifest.source?.openapi ? { compileOnFirstCall: true } : {}),
    },
  };
}
