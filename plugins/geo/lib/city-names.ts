import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { City, CityIndex } from './cities.js';

// The city index as a sorted text file in the per-user cache directory, so that one look-up
// reads it and binary-searches it instead of parsing the 1.9 MB dataset and folding all 7,300
// names (≈25 ms of a ≈50 ms `city_brief` run, garbage collection included). The file is data
// only (JSON per line, never run), in the same per-user directory the engine uses (never the
// project folder), and stamped with the dataset's size and mtime and this format's version: any
// other stamp, a short or unreadable file, or caching turned off builds the index in memory as
// before. Lines are `key\t<JSON City[]>`, sorted by the keys' UTF-8 bytes, after one header.

const FORMAT = 'toolchain-geo-names 2';

export interface CityNames {
  /** Cities of a folded name (nameKey), most populous first. */
  get(key: string): readonly City[] | undefined;
  /** The most words any indexed name has. */
  readonly maxWords: number;
}

/** The per-user cache directory, as src/cache/user-cache.ts names it (test/shipped/cache-dir.test.ts keeps them in step); undefined when caching is off. */
export function cacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.TOOLCHAIN_CACHE === 'off' || env.TOOLCHAIN_CACHE_DIR === 'off') return undefined;
  if (env.TOOLCHAIN_CACHE_DIR) return resolve(env.TOOLCHAIN_CACHE_DIR);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'toolchain');
  return join(env.HOME || homedir(), '.cache', 'toolchain');
}

/** The names of a cached index file, or undefined when it is missing, stale or not this format. */
function readNames(file: string, stamp: string): CityNames | undefined {
  // Searched as bytes: decoding the whole 1.3 MB file as UTF-8 would cost more than the search.
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const headerEnd = bytes.indexOf(NEWLINE);
  const header = headerEnd < 0 ? [] : bytes.toString('utf8', 0, headerEnd).split('\t');
  // The last line ends with "\n": a file cut short (a crash mid-write) is not used.
  if (header[0] !== FORMAT || header[1] !== stamp || bytes[bytes.length - 1] !== NEWLINE) return undefined;
  const maxWords = Number(header[2]);
  if (!Number.isInteger(maxWords) || maxWords < 1) return undefined;
  const found = new Map<string, readonly City[] | undefined>();
  return {
    maxWords,
    get(key) {
      if (found.has(key)) return found.get(key);
      const cities = search(bytes, headerEnd + 1, Buffer.from(key, 'utf8'));
      found.set(key, cities);
      return cities;
    },
  };
}

const NEWLINE = 0x0a;
const TAB = 0x09;

/** Binary search over the lines of bytes[from..], sorted by their keys' UTF-8 bytes: the cities of `key`, if a line has it. */
function search(bytes: Buffer, from: number, key: Buffer): readonly City[] | undefined {
  let low = from;
  let high = bytes.length;
  while (low < high) {
    // The line holding the midpoint: from the newline before it (or `low`) to the next newline.
    const mid = (low + high) >>> 1;
    const start = Math.max(low, bytes.lastIndexOf(NEWLINE, mid - 1) + 1);
    const end = bytes.indexOf(NEWLINE, start);
    const tab = bytes.indexOf(TAB, start);
    if (end < 0 || tab < 0 || tab > end) return undefined;
    const order = Buffer.compare(bytes.subarray(start, tab), key);
    if (order === 0) return JSON.parse(bytes.toString('utf8', tab + 1, end)) as City[];
    if (order < 0) low = end + 1;
    else high = start;
  }
  return undefined;
}

/** The index as the cache file's text. */
function serialise(index: CityIndex, stamp: string): string | undefined {
  const keys = [...index.byKey.keys()].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const lines = [`${FORMAT}\t${stamp}\t${index.maxWords}`];
  for (const key of keys) {
    // A key with a tab or newline could not be found again; a number JSON cannot hold would read back as null.
    if (/[\t\n]/.test(key)) return undefined;
    const cities = index.byKey.get(key) ?? [];
    if (cities.some((c) => !Number.isFinite(c.lat) || !Number.isFinite(c.lng) || !Number.isFinite(c.population))) return undefined;
    lines.push(`${key}\t${JSON.stringify(cities)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The names of the dataset at `dataFile`: from the cache file when it is current, else from
 * `build()` (then written to the cache for the next process).
 */
export function cachedCityNames(dataFile: string, build: () => CityIndex, env: NodeJS.ProcessEnv = process.env): CityNames {
  const dir = cacheDir(env);
  let stamp: string | undefined;
  try {
    const stat = statSync(dataFile);
    stamp = `${stat.size}:${stat.mtimeMs}`;
  } catch {
    // no stamp, no cache
  }
  const file = dir === undefined ? undefined : join(dir, 'geo-city-names.tsv');
  const cached = file !== undefined && stamp !== undefined ? readNames(file, stamp) : undefined;
  if (cached) return cached;
  const index = build();
  if (file !== undefined && stamp !== undefined && dir !== undefined) {
    const text = serialise(index, stamp);
    try {
      if (text !== undefined) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const temp = `${file}.${process.pid}`;
        writeFileSync(temp, text, { mode: 0o600 });
        renameSync(temp, file);
      }
    } catch {
      // a read-only or missing cache directory: the in-memory index serves this process
    }
  }
  return { maxWords: index.maxWords, get: (key) => index.byKey.get(key) };
}
