import { type City, cityNames, fold, nameKey, words } from '../lib/cities.js';
import { toolError } from '../lib/tool-context.js';

// find_city: the first known city named in a text.
// - Names match whole words, case-insensitively and with or without diacritics; at one position
//   the longest name wins ("New York" over "York").
// - Among cities sharing a name, one whose country, province or ISO code the text also mentions
//   wins ("London, Ontario"); otherwise the most populous.
// - Confidence: 1 when the text writes the name exactly as the dataset does; 0.95 when only
//   diacritics differ ("Zurich"); 0.8 when every word is capitalised but the case differs
//   ("OSAKA"); 0.6 when written in lower case. A name that is also a common word ("Nice",
//   "Mobile", "Man") or has three letters or fewer drops to 0.3 unless it is written exactly and
//   not at the start of a sentence.
// - The answer is the first match with confidence ≥ 0.5, else the most confident match.

interface Args {
  readonly text: string;
}

export interface FoundCity {
  readonly city: string;
  readonly country: string;
  readonly iso2: string;
  readonly timezone: string;
  readonly confidence: number;
  readonly lat: number;
  readonly lng: number;
  /** The words of the text that named the city. */
  readonly matched: string;
}

const MAX_TEXT = 100_000;

/** City names that are also everyday English words. */
const COMMON_WORDS = new Set([
  'nice', 'mobile', 'reading', 'bath', 'split', 'orange', 'male', 'man', 'van', 'mary', 'buy', 'gay', 'hope', 'best',
  'of', 'ob', 'bo', 'po', 'wa', 'ho', 'ye', 'san', 'sur', 'elk', 'leo', 'hue', 'mus', 'bor', 'gar', 'tak', 'nan', 'ely',
  'victoria', 'florence', 'alexandria', 'cork', 'derby', 'hull', 'march', 'mission', 'union', 'independence', 'liberty',
  'concord', 'pueblo', 'ketchikan', 'college', 'enterprise', 'eureka', 'temple', 'garland', 'surprise', 'ontario',
]);

export default async function findCity(args: Args): Promise<FoundCity> {
  const text = typeof args.text === 'string' ? args.text.normalize('NFC') : '';
  if (text.length > MAX_TEXT) throw toolError('TEXT_TOO_LONG', `the text has ${text.length} characters; at most ${MAX_TEXT} are searched`);
  const names = cityNames();
  const maxWords = names.maxWords;
  const tokens = words(text);
  const folded = tokens.map((t) => fold(t.word));
  let best: FoundCity | undefined;
  for (let i = 0; i < tokens.length; i++) {
    for (let n = Math.min(maxWords, tokens.length - i); n >= 1; n--) {
      const cities = names.get(folded.slice(i, i + n).join(' '));
      if (!cities) continue;
      const written = tokens.slice(i, i + n).map((t) => t.word);
      const city = cities.length > 1 ? pick(cities, mentions(tokens, folded, i, n)) : (cities[0] as City);
      const previousEnd = i === 0 ? 0 : (tokens[i - 1]?.end ?? 0);
      const sentenceStart = i === 0 || /[.!?:;]/.test(text.slice(previousEnd, tokens[i]?.start ?? 0));
      const found = answer(city, confidence(city, written, sentenceStart), text.slice(tokens[i]?.start ?? 0, tokens[i + n - 1]?.end ?? 0));
      if (found.confidence >= 0.5) return found;
      if (!best || found.confidence > best.confidence) best = found;
      i += n - 1;
      break;
    }
  }
  if (best) return best;
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  throw toolError('CITY_NOT_FOUND', `no known city is named in "${shown}"; name a city such as "Osaka" or "Buenos Aires"`);
}

interface Mentions {
  /** The folded words of the text around the name, space-separated, with a space at each end. */
  readonly text: string;
  /** The words as written, for ISO codes, which count only in capitals ("CA", not "ca"). */
  readonly words: ReadonlySet<string>;
}

/** The most populous city of the name, preferring one whose country, province or ISO code the text mentions. */
function pick(cities: readonly City[], mention: Mentions): City {
  for (const city of cities) {
    const places = [city.country, city.province].map(nameKey).filter((p) => p !== '');
    if (places.some((p) => mention.text.includes(` ${p} `)) || mention.words.has(city.iso2)) return city;
  }
  return cities[0] as City;
}

/** What the text says besides the name at tokens [i, i + n): "New York" must not count as naming the state. */
function mentions(tokens: readonly { word: string }[], folded: readonly string[], i: number, n: number): Mentions {
  const around = [...folded.slice(0, i), '|', ...folded.slice(i + n)];
  return { text: ` ${around.join(' ')} `, words: new Set(tokens.filter((_, k) => k < i || k >= i + n).map((t) => t.word)) };
}

function confidence(city: City, written: readonly string[], sentenceStart: boolean): number {
  const name = words(city.city).map((w) => w.word);
  const exact = written.join(' ') === name.join(' ');
  let score: number;
  if (exact) score = 1;
  else if (sameCase(written, name)) score = 0.95;
  else if (written.every((w) => /^\p{Lu}/u.test(w))) score = 0.8;
  else score = 0.6;
  const key = name.map(fold).join(' ');
  const ambiguous = COMMON_WORDS.has(key) || key.replace(/ /g, '').length <= 3;
  if (ambiguous && (!exact || sentenceStart)) score = Math.min(score, 0.3);
  return score;
}

/** Whether two spellings differ only in diacritics, not in case. */
function sameCase(a: readonly string[], b: readonly string[]): boolean {
  const strip = (w: string): string => w.normalize('NFD').replace(/\p{M}+/gu, '');
  return a.map(strip).join(' ') === b.map(strip).join(' ');
}

function answer(city: City, score: number, matched: string): FoundCity {
  return {
    city: city.city,
    country: city.country,
    iso2: city.iso2,
    timezone: city.timezone,
    confidence: score,
    lat: city.lat,
    lng: city.lng,
    matched,
  };
}
