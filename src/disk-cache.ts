import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A content-addressed cache on disk under `.toolchain/cache/` in the working directory, for work
// whose result depends only on its input text: parsing YAML, transforming a plugin module. It
// makes a cold CLI start skip that work for files that have not changed. Entries are never
// updated in place (a changed file has a new key), so a reader never sees half an entry, and a
// cache that cannot be written is simply not used. TOOLCHAIN_CACHE=off turns it off (benchmarks
// of the uncached path use that).

const ROOT = join('.toolchain', 'cache');
const dirs = new Map<string, string | null>();

function directory(kind: string): string | undefined {
  if (process.env.TOOLCHAIN_CACHE === 'off') return undefined;
  let dir = dirs.get(kind);
  if (dir === undefined) {
    const path = join(process.cwd(), ROOT, kind);
    try {
      mkdirSync(path, { recursive: true });
      dir = path;
    } catch {
      dir = null;
    }
    dirs.set(kind, dir);
  }
  return dir ?? undefined;
}

export function cacheKey(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 40);
}

export function readCached(kind: string, key: string): string | undefined {
  const dir = directory(kind);
  if (!dir) return undefined;
  try {
    return readFileSync(join(dir, key), 'utf8');
  } catch {
    return undefined;
  }
}

/** Most entries of one kind; past it the older half goes (every edit of a watched file adds one). */
const MAX_ENTRIES = 2000;
let writes = 0;

export function writeCached(kind: string, key: string, text: string): void {
  const dir = directory(kind);
  if (!dir) return;
  const path = join(dir, key);
  try {
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, text);
    renameSync(temp, path);
  } catch {
    // A read-only or full disk only costs the next start the work again.
  }
  if (++writes % 100 === 0) prune(dir);
}

function prune(dir: string): void {
  try {
    const names = readdirSync(dir);
    if (names.length <= MAX_ENTRIES) return;
    const byAge = names.map((name) => ({ name, mtime: statSync(join(dir, name)).mtimeMs })).sort((a, b) => a.mtime - b.mtime);
    for (const { name } of byAge.slice(0, byAge.length - MAX_ENTRIES / 2)) unlinkSync(join(dir, name));
  } catch {
    // Another process pruning at the same time, say: the next prune finishes the job.
  }
}
