import { createRequire } from 'node:module';
import { cachedCityNames, type CityNames } from './city-names.js';

// The offline city index behind find_city and city_facts: the `city-timezones` dataset (about
// 7,300 cities with country, population, coordinates and IANA zone), indexed once per load by a
// folded key — Unicode NFC, diacritics stripped, lower case, and every run of characters other
// than letters and digits collapsed to one space ("St. Louis" → "st louis", "Zürich" → "zurich").
// The 48 entries without a time zone are left out: every city this plugin reports has one.
// The data file is read with Node's own require (JSON.parse), which is about three times faster
// than importing the package through a TypeScript loader.

interface RawCity {
  readonly city: string;
  readonly city_ascii?: string;
  readonly country: string;
  readonly iso2: string;
  readonly province?: string;
  readonly pop: number;
  readonly lat: number;
  readonly lng: number;
  readonly timezone: string;
}

const DATA = 'city-timezones/data/cityMap.json';

export interface City {
  readonly city: string;
  readonly country: string;
  readonly iso2: string;
  readonly province: string;
  readonly population: number;
  readonly lat: number;
  readonly lng: number;
  readonly timezone: string;
}

export interface CityIndex {
  /** Folded name → cities of that name, most populous first. */
  readonly byKey: ReadonlyMap<string, readonly City[]>;
  /** The most words any indexed name has. */
  readonly maxWords: number;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** The words of a text, each with its offset, after NFC normalisation. */
export function words(text: string): { word: string; start: number; end: number }[] {
  const out: { word: string; start: number; end: number }[] = [];
  for (const m of text.normalize('NFC').matchAll(WORD)) out.push({ word: m[0], start: m.index, end: m.index + m[0].length });
  return out;
}

/** Lower case without diacritics: "Zürich" → "zurich". */
export function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
}

const PLAIN = /^[A-Za-z]+(?: [A-Za-z]+)*$/;

export function nameKey(name: string): string {
  if (PLAIN.test(name)) return name.toLowerCase(); // most names: no need to tokenise
  return words(name)
    .map((w) => fold(w.word))
    .join(' ');
}

let index: CityIndex | undefined;

export function cityIndex(): CityIndex {
  if (index) return index;
  const byKey = new Map<string, City[]>();
  let maxWords = 1;
  const rows = createRequire(import.meta.url)(DATA) as readonly RawCity[];
  for (const raw of rows) {
    if (!raw.timezone || !raw.city) continue;
    const city: City = {
      city: raw.city,
      country: raw.country,
      iso2: raw.iso2,
      province: raw.province ?? '',
      population: Math.round(Number(raw.pop) || 0),
      lat: Number(raw.lat),
      lng: Number(raw.lng),
      timezone: raw.timezone,
    };
    // The ASCII spelling too, where it differs after folding ("Qal eh-ye Now" / "Qal eh-ye").
    const key = nameKey(raw.city);
    const ascii = raw.city_ascii && raw.city_ascii !== raw.city ? nameKey(raw.city_ascii) : key;
    for (const k of ascii === key ? [key] : [key, ascii]) {
      if (k === '') continue;
      const list = byKey.get(k);
      if (list) list.push(city);
      else byKey.set(k, [city]);
      let wordCount = 1;
      for (let i = k.indexOf(' '); i >= 0; i = k.indexOf(' ', i + 1)) wordCount += 1;
      if (wordCount > maxWords) maxWords = wordCount;
    }
  }
  for (const list of byKey.values()) if (list.length > 1) list.sort((a, b) => b.population - a.population);
  index = { byKey, maxWords };
  return index;
}

let names: CityNames | undefined;

/**
 * Look-ups by folded name, from the per-user cache file when it is current (city-names.ts), so
 * that a process asking for a few names does not build the whole index.
 */
export function cityNames(): CityNames {
  names ??= cachedCityNames(createRequire(import.meta.url).resolve(DATA), cityIndex);
  return names;
}

/** Cities of a name (any case, with or without diacritics), most populous first. */
export function citiesNamed(name: string): readonly City[] {
  return cityNames().get(nameKey(name)) ?? [];
}

/** Up to `limit` indexed names close to `name`, for "did you mean" messages. */
export function closeNames(name: string, limit = 3): string[] {
  const key = nameKey(name);
  if (key.length < 2) return [];
  const scored: { name: string; distance: number; population: number }[] = [];
  const budget = Math.max(1, Math.floor(key.length / 3));
  for (const [candidate, cities] of cityIndex().byKey) {
    if (Math.abs(candidate.length - key.length) > budget) continue;
    const distance = editDistance(key, candidate, budget);
    const top = cities[0];
    if (distance <= budget && top) scored.push({ name: top.city, distance, population: top.population });
  }
  scored.sort((a, b) => a.distance - b.distance || b.population - a.population);
  return [...new Set(scored.map((s) => s.name))].slice(0, limit);
}

/** Levenshtein distance, giving up (returning budget + 1) once it must exceed `budget`. */
function editDistance(a: string, b: string, budget: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > budget) return budget + 1;
    previous = current;
  }
  return previous[b.length] ?? budget + 1;
}
