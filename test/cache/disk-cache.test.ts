import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheKey } from '../../src/cache/disk-cache.js';
import { openDiskCache, openUserCache, userCacheDir, type DiskCache } from '../../src/cache/index.js';

// The per-user disk cache: where it lives, who may own it, and that only entries written with
// its key are ever read back.

const ROOT = mkdtempSync(join(tmpdir(), 'toolchain-disk-cache-'));
afterAll(() => rmSync(ROOT, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(ROOT, `c${dirs++}`, 'toolchain');

function open(dir = freshDir()): { cache: DiskCache; warnings: string[] } {
  const warnings: string[] = [];
  const cache = openDiskCache(dir, { onWarning: (m) => warnings.push(m) });
  if (!cache) throw new Error(`not opened: ${warnings.join('; ')}`);
  return { cache, warnings };
}

function refusal(dir: string): { cache: DiskCache | undefined; warnings: string[] } {
  const warnings: string[] = [];
  return { cache: openDiskCache(dir, { onWarning: (m) => warnings.push(m) }), warnings };
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('the disk cache', () => {
  it('returns what was written under a key, and nothing under another', () => {
    const { cache, warnings } = open();
    cache.write('yaml', cacheKey('a', 'b'), 'value');
    expect(cache.read('yaml', cacheKey('a', 'b'))).toBe('value');
    expect(cache.read('yaml', cacheKey('a', 'c'))).toBeUndefined();
    expect(cache.read('modules', cacheKey('a', 'b'))).toBeUndefined();
    // Parts are separated: ('ab', '') is not ('a', 'b').
    expect(cacheKey('ab', '')).not.toBe(cacheKey('a', 'b'));
    expect(warnings).toEqual([]);
  });

  it('creates its directory 0700 and its key 0600, and a second opening uses the same key', () => {
    const dir = freshDir();
    const first = open(dir).cache;
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'key'))).toBe(0o600);
    expect(statSync(join(dir, 'key')).size).toBe(32);
    first.write('ajv', cacheKey('k'), 'from the first');
    expect(mode(join(dir, 'ajv'))).toBe(0o700);
    expect(mode(join(dir, 'ajv', cacheKey('k')))).toBe(0o600);
    expect(open(dir).cache.read('ajv', cacheKey('k'))).toBe('from the first');
  });

  it('ignores an entry whose text was changed, one moved to another key, one without a MAC, and one made with another key', () => {
    const dir = freshDir();
    const { cache } = open(dir);
    const key = cacheKey('entry');
    cache.write('modules', key, 'module.exports = 1');
    const file = join(dir, 'modules', key);
    const stored = readFileSync(file, 'utf8');

    writeFileSync(file, stored.replace('= 1', '= 2'));
    expect(cache.read('modules', key)).toBeUndefined();

    const other = cacheKey('other');
    writeFileSync(join(dir, 'modules', other), stored);
    expect(cache.read('modules', other)).toBeUndefined();
    expect(cache.read('yaml', key)).toBeUndefined();

    writeFileSync(file, 'module.exports = 2');
    expect(cache.read('modules', key)).toBeUndefined();

    // A cache elsewhere (another user's, say) has its own key: its entries do not pass here.
    const foreignDir = freshDir();
    open(foreignDir).cache.write('modules', key, 'module.exports = 3');
    cpSync(join(foreignDir, 'modules', key), file);
    expect(cache.read('modules', key)).toBeUndefined();

    // Recomputed and written again, it reads back.
    cache.write('modules', key, 'module.exports = 1');
    expect(cache.read('modules', key)).toBe('module.exports = 1');
  });

  it('keeps at most 2,000 entries of a kind, dropping the oldest', () => {
    const dir = freshDir();
    const { cache } = open(dir);
    for (let i = 0; i < 2100; i++) cache.write('yaml', cacheKey(String(i)), String(i));
    expect(readdirSync(join(dir, 'yaml')).length).toBeLessThanOrEqual(2000);
    expect(cache.read('yaml', cacheKey('2099'))).toBe('2099');
  });

  it('refuses kinds and keys that could leave the directory', () => {
    const { cache } = open();
    expect(() => cache.read('../x', cacheKey('a'))).toThrow(TypeError);
    expect(() => cache.write('yaml', '../../etc/passwd', 'x')).toThrow(TypeError);
  });
});

describe('refusing a cache directory that is not the user\'s alone', () => {
  it('a group- or world-writable directory: one warning, no cache, nothing written', () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    const { cache, warnings } = refusal(dir);
    expect(cache).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/mode 0777 .*writable.*caching is off/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a directory that belongs to another user", () => {
    let dir: string;
    if (process.getuid!() === 0) {
      dir = freshDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chownSync(dir, 65534, 65534);
    } else {
      dir = '/usr'; // root's, and there already
    }
    const { cache, warnings } = refusal(dir);
    expect(cache).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/belongs to user \d+, not to the current user/)]);
  });

  it('a key file others can read, or a key that is a symbolic link', () => {
    const readable = freshDir();
    open(readable);
    chmodSync(join(readable, 'key'), 0o644);
    expect(refusal(readable).warnings).toEqual([expect.stringMatching(/key file has mode 0644/)]);

    const linked = freshDir();
    mkdirSync(linked, { recursive: true, mode: 0o700 });
    const elsewhere = join(ROOT, 'planted-key');
    writeFileSync(elsewhere, Buffer.alloc(32), { mode: 0o600 });
    symlinkSync(elsewhere, join(linked, 'key'));
    const r = refusal(linked);
    expect(r.cache).toBeUndefined();
    expect(r.warnings).toEqual([expect.stringMatching(/symbolic link/)]);
  });

  it('a directory that cannot be created is quietly no cache', () => {
    const file = join(ROOT, 'a-file');
    writeFileSync(file, '');
    const r = refusal(join(file, 'toolchain'));
    expect(r.cache).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });
});

describe('the per-user cache directory', () => {
  it('is TOOLCHAIN_CACHE_DIR, else XDG_CACHE_HOME/toolchain, else ~/.cache/toolchain', () => {
    expect(userCacheDir({ TOOLCHAIN_CACHE_DIR: '/x/cache', XDG_CACHE_HOME: '/xdg', HOME: '/home/u' })).toBe('/x/cache');
    expect(userCacheDir({ XDG_CACHE_HOME: '/xdg', HOME: '/home/u' })).toBe('/xdg/toolchain');
    expect(userCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.cache/toolchain');
    expect(userCacheDir({ HOME: '/home/u' })).toBe('/home/u/.cache/toolchain');
  });

  it('is off with TOOLCHAIN_CACHE_DIR=off or TOOLCHAIN_CACHE=off', () => {
    expect(userCacheDir({ TOOLCHAIN_CACHE_DIR: 'off', HOME: '/home/u' })).toBeUndefined();
    expect(userCacheDir({ TOOLCHAIN_CACHE: 'off', TOOLCHAIN_CACHE_DIR: '/x', HOME: '/home/u' })).toBeUndefined();
    expect(openUserCache({ env: { TOOLCHAIN_CACHE_DIR: 'off' } })).toBeUndefined();
  });

  it('opens the directory the environment names', () => {
    const dir = freshDir();
    const cache = openUserCache({ env: { TOOLCHAIN_CACHE_DIR: dir } });
    expect(cache?.dir).toBe(dir);
    expect(mode(dir)).toBe(0o700);
  });
});
