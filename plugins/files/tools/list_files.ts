import { type Dirent, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { checkComplexity, compileGlob, staticBase } from '../lib/glob.js';
import { openPinnedFolder, type PinnedFolder } from '../lib/pinned.js';
import { filesRoot, isInside, resolveInRoot } from '../lib/root.js';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// list_files: the files under the files root that match glob patterns (see lib/glob.ts for the
// syntax and the complexity limits), sorted by path, with sizes and the totals a report needs. Directories are walked
// without following symbolic links; a linked file is listed when its target is a file inside
// the root. An `ignore` pattern ending in `/**` prunes whole directories (node_modules by default).
// Each folder is read through a descriptor of the folder checked (pinned.ts), and each subfolder
// opened through its parent's without following a link: a folder swapped for a link to outside
// the root during the walk fails the call with PATH_ESCAPE instead of being listed.

interface Args {
  readonly patterns?: readonly string[];
  readonly ignore?: readonly string[];
  readonly dot?: boolean;
  readonly max_results?: number;
}

export interface FileEntry {
  /** Relative to the root, forward slashes. */
  readonly path: string;
  readonly size: number;
  /** Last modification, ISO 8601. */
  readonly modified: string;
}

export interface FileList {
  readonly files: readonly FileEntry[];
  readonly count: number;
  readonly total_bytes: number;
  /** The largest file listed, or null when none matched. */
  readonly largest: FileEntry | null;
  /** True when max_results (or the walk limit) cut the list short. */
  readonly truncated: boolean;
}

const MAX_VISITED = 200_000;

export default async function listFiles(args: Args, ctx?: ToolContext): Promise<FileList> {
  const { patterns = ['**/*'], ignore = ['**/node_modules/**'], dot = false, max_results = 1000 } = args;
  if (patterns.length === 0) throw toolError('BAD_PATTERN', 'give at least one pattern, e.g. "**/*.md"');
  for (const p of [...patterns, ...ignore]) checkPattern(p);
  const root = await filesRoot(ctx);
  const wanted = patterns.map((p) => compileGlob(normalise(p), { dot }));
  const prune = ignore.filter((p) => p.endsWith('/**')).map((p) => compileGlob(normalise(p.slice(0, -3)), { dot: true }));
  const skip = ignore.filter((p) => !p.endsWith('/**')).map((p) => compileGlob(normalise(p), { dot: true }));
  const matches = (rel: string): boolean => wanted.some((m) => m(rel)) && !skip.some((m) => m(rel));

  const found: FileEntry[] = [];
  let visited = 0;
  let truncated = false;
  const walk = async (dir: PinnedFolder, rel: string): Promise<void> => {
    ctx?.signal.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir.path, { withFileTypes: true });
    } catch {
      ctx?.log('list_files: skipped an unreadable directory', { path: rel || '.' });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (truncated) return;
      if (++visited > MAX_VISITED) {
        truncated = true;
        return;
      }
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = join(dir.path, entry.name);
      if (entry.isDirectory()) {
        if (!prune.some((m) => m(childRel))) await within(root, childAbs, childRel, (sub) => walk(sub, childRel));
        continue;
      }
      if (!matches(childRel)) continue;
      const info = await fileInfo(childAbs, entry, root);
      if (!info) continue;
      if (found.length === max_results) {
        truncated = true;
        return;
      }
      found.push({ path: childRel, size: info.size, modified: info.mtime.toISOString() });
    }
  };
  for (const base of bases(patterns)) {
    const start = await resolveInRoot(root, base);
    if (start.exists) await within(root, start.absolute, start.relative, (folder) => walk(folder, start.relative === '.' ? '' : start.relative));
  }
  const unique = [...new Map(found.map((f) => [f.path, f])).values()].sort((a, b) => (a.path < b.path ? -1 : 1));
  let largest: FileEntry | null = null;
  for (const f of unique) if (!largest || f.size > largest.size) largest = f;
  return { files: unique, count: unique.length, total_bytes: unique.reduce((n, f) => n + f.size, 0), largest, truncated };
}

/** `use` with the folder opened and checked; a folder that is gone or no folder (any more) is skipped, one that became a link out is PATH_ESCAPE. */
async function within(root: string, absolute: string, rel: string, use: (folder: PinnedFolder) => Promise<void>): Promise<void> {
  let folder: PinnedFolder;
  try {
    folder = await openPinnedFolder(root, absolute, rel);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'PATH_ESCAPE') throw error;
    return;
  }
  try {
    await use(folder);
  } finally {
    await folder.close();
  }
}

function normalise(pattern: string): string {
  return pattern.replace(/^\.\//, '');
}

function checkPattern(pattern: string): void {
  if (typeof pattern !== 'string' || pattern === '') throw toolError('BAD_PATTERN', 'a pattern must be a non-empty string');
  if (pattern.startsWith('/') || /^[A-Za-z]:/.test(pattern) || pattern.split('/').includes('..')) {
    throw toolError('PATH_ESCAPE', `pattern "${pattern}" reaches outside the files root; patterns are relative to it, without ".."`);
  }
  checkComplexity(pattern);
}

/** Where to start walking: the static prefix of each pattern, or the root when any starts with a wildcard. */
function bases(patterns: readonly string[]): string[] {
  const all = patterns.map((p) => staticBase(normalise(p)));
  if (all.includes('')) return ['.'];
  return [...new Set(all)].filter((b, _, list) => !list.some((other) => other !== b && b.startsWith(`${other}/`)));
}

/** Size and time of a regular file; a symbolic link counts when its real target is a file inside the root. */
async function fileInfo(path: string, entry: Dirent, root: string): Promise<{ size: number; mtime: Date } | undefined> {
  try {
    if (entry.isSymbolicLink()) {
      const real = await fs.realpath(path);
      if (!isInside(root, real)) return undefined;
      const info = await fs.stat(real);
      return info.isFile() ? info : undefined;
    }
    if (!entry.isFile()) return undefined;
    // Not followed: a file swapped for a link since the folder was read is not one of the root's files.
    const info = await fs.lstat(path);
    return info.isFile() ? info : undefined;
  } catch {
    return undefined;
  }
}
