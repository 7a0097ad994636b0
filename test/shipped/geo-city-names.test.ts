import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cityIndex } from '../../plugins/geo/lib/cities.js';
import { cachedCityNames } from '../../plugins/geo/lib/city-names.js';

// The geo plugin's name cache (plugins/geo/lib/city-names.ts) must answer exactly as the
// in-memory index does, and must never use a file that is stale, cut short or of another format.

const DATA = createRequire(import.meta.url).resolve('city-timezones/data/cityMap.json');
let dir: string;
const env = (): NodeJS.ProcessEnv => ({ TOOLCHAIN_CACHE_DIR: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'geo-names-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('geo city names cache', () => {
  it('answers every name exactly as the in-memory index, and nothing for other names', () => {
    const index = cityIndex();
    let builds = 0;
    const build = () => (builds++, index);
    cachedCityNames(DATA, build, env());
    const cached = cachedCityNames(DATA, build, env());
    expect(builds).toBe(1);
    expect(cached.maxWords).toBe(index.maxWords);
    for (const [key, cities] of index.byKey) expect(cached.get(key)).toEqual(cities);
    for (const key of ['', 'zzzz', 'osak', 'osakaa', 'new', 'a', '\u{1F600}', 'st louiss']) expect(cached.get(key)).toBe(index.byKey.get(key));
  });

  it('rebuilds from a file that is cut short or of another stamp', async () => {
    const file = join(dir, 'geo-city-names.tsv');
    const text = await readFile(file, 'utf8');
    let builds = 0;
    const build = () => (builds++, cityIndex());
    await writeFile(file, text.slice(0, text.length - 10));
    expect(cachedCityNames(DATA, build, env()).get('osaka')?.[0]?.city).toBe('Osaka');
    expect(builds).toBe(1);
    await writeFile(file, text.replace(/^([^\t]*\t)[^\t]*/, '$11:2'));
    cachedCityNames(DATA, build, env());
    expect(builds).toBe(2);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('writes nothing when caching is off', () => {
    let builds = 0;
    const names = cachedCityNames(DATA, () => (builds++, cityIndex()), { TOOLCHAIN_CACHE_DIR: 'off' });
    expect(names.get('osaka')?.[0]?.population).toBe(6943207);
    expect(builds).toBe(1);
  });
});
