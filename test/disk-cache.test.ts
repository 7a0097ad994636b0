import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheKey, readCached, writeCached } from '../src/disk-cache.js';

const KIND = `test-${process.pid}`;
const DIR = join(process.cwd(), '.toolchain', 'cache', KIND);
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('the disk cache', () => {
  it('returns what was written under a key, and nothing under another', () => {
    writeCached(KIND, cacheKey('a', 'b'), 'value');
    expect(readCached(KIND, cacheKey('a', 'b'))).toBe('value');
    expect(readCached(KIND, cacheKey('a', 'c'))).toBeUndefined();
    // Parts are separated: ('ab', '') is not ('a', 'b').
    expect(cacheKey('ab', '')).not.toBe(cacheKey('a', 'b'));
  });

  it('keeps at most 2,000 entries of a kind, dropping the oldest', () => {
    for (let i = 0; i < 2100; i++) writeCached(KIND, cacheKey(String(i)), String(i));
    const left = readdirSync(DIR).length;
    expect(left).toBeLessThanOrEqual(2000);
    expect(readCached(KIND, cacheKey('2099'))).toBe('2099');
  });

  it('is off with TOOLCHAIN_CACHE=off', () => {
    process.env.TOOLCHAIN_CACHE = 'off';
    try {
      writeCached(KIND, cacheKey('off'), 'x');
      expect(readCached(KIND, cacheKey('a', 'b'))).toBeUndefined();
    } finally {
      delete process.env.TOOLCHAIN_CACHE;
    }
    expect(readCached(KIND, cacheKey('off'))).toBeUndefined();
  });
});
