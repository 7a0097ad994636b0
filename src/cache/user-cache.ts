import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { openDiskCache, type DiskCache, type OpenDiskCacheOptions } from './disk-cache.js';

// Where a user's caches live: $TOOLCHAIN_CACHE_DIR when set (`off` turns every disk cache off,
// as does the older TOOLCHAIN_CACHE=off), else $XDG_CACHE_HOME/toolchain, else
// ~/.cache/toolchain. Never the project folder: a checked-out repository or a shared folder must
// not be able to hand the engine results (let alone code) it did not compute itself.

export type CacheEnv = Readonly<Record<string, string | undefined>>;

/** The per-user cache directory the environment names, or undefined when caching is off. */
export function userCacheDir(env: CacheEnv = process.env): string | undefined {
  if (env.TOOLCHAIN_CACHE === 'off') return undefined;
  const explicit = env.TOOLCHAIN_CACHE_DIR;
  if (explicit === 'off') return undefined;
  if (explicit) return resolve(explicit);
  // The XDG spec: a relative path in XDG_CACHE_HOME is invalid and ignored.
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'toolchain');
  return join(env.HOME || homedir(), '.cache', 'toolchain');
}

export interface OpenUserCacheOptions extends OpenDiskCacheOptions {
  /** Where TOOLCHAIN_CACHE_DIR, XDG_CACHE_HOME and HOME are read (default process.env). */
  readonly env?: CacheEnv;
}

/** The per-user disk cache, opened and checked (see openDiskCache), or undefined when off or refused. */
export function openUserCache(options: OpenUserCacheOptions = {}): DiskCache | undefined {
  const dir = userCacheDir(options.env ?? process.env);
  return dir === undefined ? undefined : openDiskCache(dir, options);
}
