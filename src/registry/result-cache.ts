// `cache: { ttl }`: identical arguments within the ttl reuse the result. One cache per tool
// version (it lives on the Tool object), so a reload — even one that keeps the version number —
// never serves results of the old handler. Results are kept as JSON text and parsed on a hit, so
// no two callers share (and can mutate) one object.

export interface ResultCache {
  get(key: string): unknown;
  set(key: string, json: string): void;
  readonly size: number;
}

interface Entry {
  readonly json: string;
  readonly expires: number;
}

/** A miss. Distinct from every result, including null. */
export const MISS: unique symbol = Symbol('cache miss');

export function createResultCache(ttlMs: number, now: () => number, maxEntries = 1000): ResultCache {
  const entries = new Map<string, Entry>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return MISS;
      if (entry.expires <= now()) {
        entries.delete(key);
        return MISS;
      }
      return JSON.parse(entry.json) as unknown;
    },
    set(key, json) {
      entries.delete(key);
      // A Map iterates in insertion order: the first entry is the oldest one written.
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { json, expires: now() + ttlMs });
    },
    get size() {
      return entries.size;
    },
  };
}
