import { stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { importModule } from '../common/import-module.js';

// A small debounced watcher over one folder, shared by plugin hot reload and chain files. Editors
// save in bursts and atomically (write a temp file, rename it over; or unlink then add), so
// events are gathered per group (a plugin folder, say) and delivered once the group has been
// quiet for `debounceMs`. Delivery never overlaps for one group: a change arriving while its
// handler is still running is delivered again after it finishes.
//
// chokidar drops a file's second 'change' within 50 ms of the first (a throttle with no trailing
// event), so the last write of a burst can go unseen. After each delivery the delivered files are
// therefore checked once more after that window: a file whose size or times moved since the
// delivery is delivered again.

export interface WatchFilesOptions {
  /** Quiet time before a group's changes are delivered (default 50 ms). */
  readonly debounceMs?: number;
  /** Paths (absolute) to pay attention to; default: everything but node_modules, .git and editor backup files. */
  readonly filter?: (path: string) => boolean;
  /** Which group a path (relative to the folder) belongs to; default: one group, ''. */
  readonly groupBy?: (relativePath: string) => string | undefined;
  /** How deep below the folder to watch (default 8). */
  readonly depth?: number;
}

export interface FileChanges {
  readonly key: string;
  /** Absolute paths that changed (added, changed or removed) since the last delivery. */
  readonly paths: readonly string[];
}

export interface FileWatcher {
  /** Resolves once the initial scan of the folder is done and changes are being seen. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

const IGNORED_SEGMENT = /(^|[\\/])(node_modules|\.git)([\\/]|$)/;

export function defaultWatchFilter(path: string): boolean {
  if (IGNORED_SEGMENT.test(path)) return false;
  const base = path.slice(path.lastIndexOf(sep) + 1);
  return !base.endsWith('~') && !base.endsWith('.swp') && !base.endsWith('.swx') && !(base.startsWith('.#'));
}

interface Group {
  timer?: NodeJS.Timeout;
  verifyTimer?: NodeJS.Timeout;
  paths: Set<string>;
  running: boolean;
  lastEventAt: number;
}

/** chokidar's change throttle, plus a margin. */
const CHOKIDAR_THROTTLE_MS = 50;
const VERIFY_MARGIN_MS = 25;

async function signature(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`;
  } catch {
    return 'missing';
  }
}

export function watchFiles(dir: string, options: WatchFilesOptions, onChange: (changes: FileChanges) => void | Promise<void>): FileWatcher {
  const debounceMs = options.debounceMs ?? 50;
  const filter = options.filter ?? defaultWatchFilter;
  const groupBy = options.groupBy ?? (() => '');
  const groups = new Map<string, Group>();
  let closed = false;

  const deliver = async (key: string, group: Group): Promise<void> => {
    group.timer = undefined;
    if (closed || group.running) return;
    group.running = true;
    const paths = [...group.paths];
    group.paths.clear();
    const seen = new Map(await Promise.all(paths.map(async (p) => [p, await signature(p)] as const)));
    try {
      await onChange({ key, paths });
    } catch {
      // The consumer reports its own failures; the watcher keeps watching.
    } finally {
      group.running = false;
    }
    if (closed) return;
    if (group.paths.size > 0) schedule(key, group);
    verifyLater(key, group, seen);
  };

  const verifyLater = (key: string, group: Group, seen: ReadonlyMap<string, string>): void => {
    if (group.verifyTimer) clearTimeout(group.verifyTimer);
    const wait = Math.max(0, group.lastEventAt + CHOKIDAR_THROTTLE_MS + VERIFY_MARGIN_MS - Date.now());
    group.verifyTimer = setTimeout(async () => {
      group.verifyTimer = undefined;
      let moved = false;
      for (const [path, before] of seen) {
        if ((await signature(path)) === before) continue;
        group.paths.add(path);
        moved = true;
      }
      if (closed) return;
      if (moved && !group.running) schedule(key, group);
    }, wait);
  };

  const schedule = (key: string, group: Group): void => {
    if (group.timer) clearTimeout(group.timer);
    group.timer = setTimeout(() => void deliver(key, group), debounceMs);
  };

  const onEvent = (_event: string, path: string): void => {
    if (closed) return;
    const rel = relative(dir, path);
    if (rel === '' || rel.startsWith('..')) return;
    const key = groupBy(rel);
    if (key === undefined) return;
    let group = groups.get(key);
    if (!group) {
      group = { paths: new Set(), running: false, lastEventAt: 0 };
      groups.set(key, group);
    }
    group.paths.add(path);
    group.lastEventAt = Date.now();
    // While the group's handler runs, deliver() reschedules itself when it finishes.
    if (!group.running) schedule(key, group);
  };

  // chokidar is imported when something is first watched: a one-shot CLI command never pays for it.
  let watcher: FSWatcher | undefined;
  const ready = importModule<typeof import('chokidar')>('chokidar').then(({ watch }) => {
    if (closed) return;
    const w = watch(dir, {
      ignoreInitial: true,
      followSymlinks: false,
      depth: options.depth ?? 8,
      ignored: (path: string) => path !== dir && !filter(path),
    });
    watcher = w;
    w.on('all', onEvent);
    // A watcher error (a folder vanishing under it, EMFILE) must not crash the engine.
    w.on('error', () => undefined);
    return new Promise<void>((resolve) => w.once('ready', () => resolve()));
  });
  return {
    ready,
    async close() {
      closed = true;
      for (const group of groups.values()) {
        if (group.timer) clearTimeout(group.timer);
        if (group.verifyTimer) clearTimeout(group.verifyTimer);
      }
      groups.clear();
      await ready.catch(() => undefined);
      await watcher?.close();
    },
  };
}

/** groupBy for "one group per top-level entry" (a plugin folder). */
export function firstSegment(relativePath: string): string | undefined {
  const first = relativePath.split(/[\\/]/)[0];
  return first === undefined || first === '' ? undefined : first;
}
