import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openCacheKey } from './cache-key-file.js';

// A content-addressed cache on disk, for work whose result depends only on its input text:
// parsing YAML, transforming a plugin module, compiling a validator. It lets a cold CLI start skip
// that work for files that have not changed. It lives in a directory owned by the user (see
// user-cache.ts), never in a project folder, and every entry carries an HMAC-SHA256 under a
// random key kept in that directory: an entry written by anyone without the key (or copied under
// another name) reads as a miss and is computed again, so nothing read back was made by anyone
// but this user's own engine. Entries are never updated in place (a changed input has a new key)
// and are written to a temporary file and renamed, so a reader never sees half an entry.

export interface DiskCache {
  /** The directory holding the key and one folder per kind of entry. */
  readonly dir: string;
  /** The authenticated text stored under `key`, or undefined (missing, damaged, forged). */
  read(kind: string, key: string): string | undefined;
  /** Stores `text` under `key`; a cache that cannot be written is simply not used. */
  write(kind: string, key: string, text: string): void;
}

export interface OpenDiskCacheOptions {
  /** Told once, when the directory or its key is refused (the cache is then off). Default: process.emitWarning. */
  readonly onWarning?: (message: string) => void;
}

/** A key made of parts (separated, so ('ab', '') differs from ('a', 'b')). */
export function cacheKey(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 40);
}

const KIND = /^[a-z][a-z0-9-]{0,31}$/;
const KEY = /^[0-9a-f]{16,64}$/;
const MAC_HEX = 64;
/** Most entries of one kind; past it the older half goes (every edit of a watched file adds one). */
const MAX_ENTRIES = 2000;
const PRUNE_EVERY = 100;

function defaultCacheWarning(message: string): void {
  process.emitWarning(message, { code: 'TOOLCHAIN_CACHE' });
}

/**
 * Opens (creating it 0700 when missing) a cache directory. Refused, with one warning and
 * undefined, when the directory or its key file is not the current user's alone (another owner,
 * group- or world-writable; a key readable by others). A directory that cannot be created is
 * silently no cache (a read-only home, say).
 */
export function openDiskCache(dir: string, options: OpenDiskCacheOptions = {}): DiskCache | undefined {
  const warn = options.onWarning ?? defaultCacheWarning;
  const key = openCacheKey(dir);
  if (!key.ok) {
    if (key.refused) warn(`not using the cache directory ${dir}: ${key.reason}; caching is off`);
    return undefined;
  }
  return createDiskCache(dir, key.key);
}

function createDiskCache(dir: string, secret: Buffer): DiskCache {
  const madeKinds = new Set<string>();
  let writes = 0;

  const mac = (kind: string, key: string, text: string): Buffer =>
    createHmac('sha256', secret).update(kind).update('\0').update(key).update('\0').update(text).digest();

  function pathOf(kind: string, key: string): string {
    // Kinds and keys are ours (cacheKey gives hex), never from a file: checked so that a bug cannot
    // turn into a path outside the directory.
    if (!KIND.test(kind) || !KEY.test(key)) throw new TypeError(`bad cache kind or key: ${kind}/${key}`);
    return join(dir, kind, key);
  }

  return {
    dir,
    read(kind, key) {
      const path = pathOf(kind, key);
      let stored: string;
      try {
        stored = readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
      if (stored.length < MAC_HEX + 1 || stored[MAC_HEX] !== '\n') return undefined;
      const given = Buffer.from(stored.slice(0, MAC_HEX), 'hex');
      const text = stored.slice(MAC_HEX + 1);
      const expected = mac(kind, key, text);
      return given.length === expected.length && timingSafeEqual(given, expected) ? text : undefined;
    },
    write(kind, key, text) {
      const path = pathOf(kind, key);
      const folder = join(dir, kind);
      try {
        if (!madeKinds.has(kind)) {
          mkdirSync(folder, { recursive: true, mode: 0o700 });
          madeKinds.add(kind);
        }
        const temp = `${path}.${process.pid}.${writes}.tmp`;
        writeFileSync(temp, `${mac(kind, key, text).toString('hex')}\n${text}`, { mode: 0o600 });
        renameSync(temp, path);
      } catch {
        // A read-only or full disk only costs the next start the work again.
      }
      if (++writes % PRUNE_EVERY === 0) prune(folder);
    },
  };
}

function prune(folder: string): void {
  try {
    const names = readdirSync(folder);
    if (names.length <= MAX_ENTRIES) return;
    const byAge = names.map((name) => ({ name, mtime: statSync(join(folder, name)).mtimeMs })).sort((a, b) => a.mtime - b.mtime);
    for (const { name } of byAge.slice(0, byAge.length - MAX_ENTRIES / 2)) unlinkSync(join(folder, name));
  } catch {
    // Another process pruning at the same time, say: the next prune finishes the job.
  }
}
