import { basename, join } from 'node:path';
import type { Diagnostic } from '../common/errors.js';
import { buildPlugin, type PluginReady, type ReadyPlugin } from './build-plugin.js';
import { loadPlugin, type PluginLoad } from './load-plugin.js';
import { readManifest } from './read-manifest.js';
import { createSourceSessions } from './sources/source-sessions.js';
import { hasManifest, listPluginFolders } from './plugin-folders.js';
import { resolveRequirements, type Candidate, type Resolution } from './requirements.js';
import type { PluginEvent, PluginHost, PluginHostOptions, PluginState, PluginStatus } from './types.js';
import { firstSegment, watchFiles, type FileWatcher } from './watch-files.js';

// Plugins folder ⇄ registry. A load is: read manifest → validate → import handlers
// (load-plugin.ts, as the registry's load mode says) → the registry builds the tools once
// (build-plugin.ts); then the whole set is reconciled: requirements decide what may be active,
// and each plugin that changed has its prebuilt tools swapped into the registry in one step. A
// failed load keeps the folder's last good version; fixing the files activates the fix. All work
// runs one operation at a time, so a burst of changes always ends in the state of the last one.
// A plugin served by an MCP server loads beside the rest but does not hold them up: the others
// are installed as soon as they are loaded, and the server's plugin joins when it has listed its
// tools (`ready` waits for both). The host owns the servers: one per plugin, ended by close().

interface Folder {
  readonly dir: string;
  good?: ReadyPlugin;
  /** Diagnostics of the latest attempt, when it failed. */
  failure?: { readonly name?: string; readonly diagnostics: readonly Diagnostic[] };
  /** Last reported state, to report only changes. */
  reported?: string;
  /** Counts loads begun: a slow load that finishes after a newer one began is dropped. */
  generation: number;
}

interface Prepared {
  readonly entry: string;
  readonly folder: Folder;
  readonly generation: number;
  readonly loaded: PluginLoad;
  readonly load: PluginReady;
}

export function createPluginHost(options: PluginHostOptions): PluginHost {
  const { dir, registry, cache, isolation, log, env } = options;
  const folders = new Map<string, Folder>();
  /** Plugin name → the version in the registry now. */
  const installed = new Map<string, ReadyPlugin>();
  let resolution: Resolution = new Map();
  let queue: Promise<void> = Promise.resolve();
  let watcher: FileWatcher | undefined;
  let closed = false;
  const sessions = createSourceSessions();

  const emit = (event: PluginEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's failure must not stop reloads.
    }
  };

  const run = (op: () => Promise<void>): Promise<void> => {
    const next = queue.then(() => (closed ? undefined : op()));
    queue = next.catch(() => undefined);
    return next;
  };

  /**
   * Begins loading a folder. `slow` is true for a plugin whose tools come from an MCP server: its
   * load may wait for the server to start, so nothing else waits for it. undefined: the folder
   * has no manifest any more (it is forgotten at once).
   */
  async function begin(entry: string): Promise<{ slow: boolean; prepared: Promise<Prepared> } | undefined> {
    const folderDir = join(dir, entry);
    if (!(await hasManifest(folderDir))) {
      forget(entry);
      return undefined;
    }
    const folder = folders.get(entry) ?? { dir: folderDir, generation: 0 };
    folders.set(entry, folder);
    const generation = ++folder.generation;
    const read = await readManifest(folderDir, cache);
    const slow = read.manifest?.source?.mcp !== undefined;
    const prepared = (async (): Promise<Prepared> => {
      const loaded = await loadPlugin(folderDir, {
        mode: registry.load,
        read,
        sessions,
        onSourceChanged: () => void reloadEntry(entry),
        ...(cache ? { cache } : {}),
        ...(isolation ? { isolation } : {}),
        ...(log ? { log } : {}),
        ...(env ? { env } : {}),
      });
      return { entry, folder, generation, loaded, load: buildPlugin(registry, loaded) };
    })();
    return { slow, prepared };
  }

  /** A finished load takes effect (or, superseded by a newer load of the folder, is dropped). */
  function apply({ entry, folder, generation, loaded, load }: Prepared): void {
    if (folders.get(entry) !== folder || folder.generation !== generation) {
      if (loaded.ok) loaded.plugin.retire?.();
      return;
    }
    // A reload never loses a tool that works now: one that fails to load keeps the last good version.
    const lost = load.ok && folder.good ? load.plugin.failedTools.filter((f) => folder.good!.tools.some((t) => t.name === f.name)) : [];
    // A version that will not serve ends its workers at once.
    if (loaded.ok && !(load.ok && lost.length === 0)) loaded.plugin.retire?.();
    if (load.ok && lost.length === 0) {
      // The version it replaces ends its workers once idle (runs that still hold it can call it).
      if (folder.good !== load.plugin) folder.good?.retire?.();
      folder.good = load.plugin;
      folder.failure = undefined;
    } else if (load.ok) {
      folder.failure = { name: load.plugin.name, diagnostics: lost.map((f) => f.diagnostic) };
    } else {
      folder.failure = { ...(load.name !== undefined ? { name: load.name } : {}), diagnostics: load.diagnostics };
    }
    folder.reported = undefined; // touched: always report its outcome
  }

  /**
   * Loads folders side by side and reconciles once the quick ones are in; each slow one is
   * applied (and reconciled) by an operation of its own when it finishes. Resolves when all are.
   */
  async function loadFolders(entries: readonly string[]): Promise<{ readonly later: Promise<void> }> {
    const begun = (await Promise.all(entries.map(begin))).filter((b) => b !== undefined);
    const settled = new Set<Promise<Prepared>>();
    for (const b of begun) void b.prepared.then(() => settled.add(b.prepared), () => undefined);
    const quick = await Promise.all(begun.filter((b) => !b.slow).map((b) => b.prepared));
    quick.forEach(apply);
    const slow = begun.filter((b) => b.slow);
    for (const b of slow.filter((s) => settled.has(s.prepared))) apply(await b.prepared);
    reconcile();
    const later = slow
      .filter((s) => !settled.has(s.prepared))
      .map((b) =>
        b.prepared.then(
          (p) =>
            run(async () => {
              apply(p);
              reconcile();
            }),
          () => undefined,
        ),
      );
    return { later: Promise.all(later).then(() => undefined) };
  }

  function candidates(): Candidate[] {
    const list = [...folders.entries()].filter(([, f]) => f.good).map(([entry, f]) => ({ entry, plugin: f.good! }));
    // The version already serving keeps its name in a clash: nothing that works stops working.
    const serving = (p: ReadyPlugin): number => (installed.get(p.name)?.dir === p.dir ? 0 : 1);
    list.sort((a, b) => serving(a.plugin) - serving(b.plugin) || a.entry.localeCompare(b.entry));
    return list.map(({ entry, plugin }) => ({
      key: entry,
      name: plugin.name,
      version: plugin.version,
      capabilities: plugin.capabilities,
      requirements: plugin.requirements,
      file: plugin.manifestFile,
    }));
  }

  function reconcile(): void {
    resolution = resolveRequirements(candidates());
    const desired = new Map<string, ReadyPlugin>();
    for (const [entry, problems] of resolution) {
      const plugin = folders.get(entry)?.good;
      if (plugin && problems.length === 0) desired.set(plugin.name, plugin);
    }
    for (const [name, plugin] of installed) {
      if (desired.has(name)) continue;
      registry.removePluginTools(name);
      installed.delete(name);
      const stillThere = [...folders.values()].some((f) => f.good?.name === name);
      if (!stillThere) emit({ type: 'plugin:removed', plugin: name, dir: plugin.dir, version: plugin.version });
    }
    for (const [name, plugin] of desired) {
      if (installed.get(name) === plugin) continue;
      // Built (and compiled) once during the load: installing compiles nothing.
      registry.installPluginTools(plugin.built);
      installed.set(name, plugin);
    }
    for (const [entry, folder] of inFolderOrder()) {
      // Tools of an inactive plugin: TOOL_NOT_FOUND names the plugin and its unmet requirement.
      if (folder.good) registry.setInactive?.(folder.good.name, folder.good.tools.map((t) => t.name), resolution.get(entry)?.[0]?.message);
      if (folder.good) registry.setFailedTools?.(folder.good.name, folder.good.failedTools);
      report(entry, folder);
    }
  }

  function statusOf(entry: string, folder: Folder): PluginStatus {
    const good = folder.good;
    const problems = resolution.get(entry) ?? [];
    const state: PluginState = !good ? 'error' : problems.length > 0 ? 'inactive' : 'active';
    const name = good?.name ?? folder.failure?.name ?? basename(folder.dir);
    const diagnostics = [...problems, ...(folder.failure?.diagnostics ?? good?.warnings ?? [])];
    const tools = state === 'active' && good ? good.tools.map((t) => `${good.name}/${t.name}`) : [];
    return { name, ...(good ? { version: good.version } : {}), dir: folder.dir, status: state, stale: Boolean(good && folder.failure), tools, diagnostics };
  }

  function report(entry: string, folder: Folder): void {
    const status = statusOf(entry, folder);
    const key = `${status.status}|${status.version}|${status.stale}|${status.diagnostics.map((d) => d.message).join('|')}`;
    if (folder.reported === key) return;
    folder.reported = key;
    const base = { plugin: status.name, dir: status.dir, ...(status.version ? { version: status.version } : {}), diagnostics: status.diagnostics };
    if (folder.failure) emit({ type: 'plugin:error', ...base, diagnostics: folder.failure.diagnostics });
    else if (status.status === 'inactive') emit({ type: 'plugin:inactive', ...base });
    else if (status.status === 'active') emit({ type: 'plugin:loaded', ...base });
  }

  /** A folder (or its manifest) is gone. Installed plugins are reported removed by reconcile. */
  function forget(entry: string): void {
    const folder = folders.get(entry);
    if (!folder) return;
    folders.delete(entry);
    sessions.forget(join(dir, entry));
    const good = folder.good;
    good?.retire?.();
    if (good && installed.get(good.name) === good) return;
    emit({ type: 'plugin:removed', plugin: good?.name ?? folder.failure?.name ?? entry, dir: folder.dir, ...(good ? { version: good.version } : {}) });
  }

  function forgetMissing(present: ReadonlySet<string>): void {
    for (const entry of [...folders.keys()]) if (!present.has(entry)) forget(entry);
  }

  /** Folders load side by side: report and list them in folder order, whatever order loads finished in. */
  const inFolderOrder = (): [string, Folder][] => [...folders.entries()].sort(([a], [b]) => a.localeCompare(b));

  // Folders load side by side (their file reads overlap); what becomes active is decided
  // afterwards, in folder order, by reconcile(). What a slow folder's load settles is awaited
  // outside the operation, so that later operations do not queue behind a starting server.
  const reloadAll = async (): Promise<void> => {
    let later: Promise<void> = Promise.resolve();
    await run(async () => {
      const entries = await listPluginFolders(dir);
      forgetMissing(new Set(entries));
      ({ later } = await loadFolders(entries));
    });
    await later;
  };

  const reloadEntry = async (entry: string): Promise<void> => {
    let later: Promise<void> = Promise.resolve();
    await run(async () => {
      ({ later } = await loadFolders([entry]));
    });
    await later;
  };

  const ready = (async () => {
    if (options.watch) {
      watcher = watchFiles(dir, { debounceMs: options.debounceMs ?? 50, groupBy: firstSegment }, ({ key }) => reloadEntry(key));
    }
    await Promise.all([reloadAll(), watcher?.ready]);
  })();

  return {
    ready,
    plugins: () => inFolderOrder().map(([entry, folder]) => statusOf(entry, folder)),
    reload: reloadAll,
    async close() {
      await watcher?.close();
      closed = true;
      await queue;
      for (const folder of folders.values()) folder.good?.retire?.();
      await sessions.close();
    },
  };
}
