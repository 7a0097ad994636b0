import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every file of test/fixtures/bad with what its first line says it must produce. */
export interface BadFixture {
  readonly file: string;
  readonly name: string;
  readonly code: string;
  readonly line?: number;
  readonly col?: number;
  readonly suggestion?: string;
}

export const BAD_DIR = join(import.meta.dirname, '..', 'fixtures', 'bad');

export function badFixtures(): BadFixture[] {
  return readdirSync(BAD_DIR)
    .filter((n) => n.endsWith('.yaml'))
    .sort()
    .map((name) => {
      const file = join(BAD_DIR, name);
      const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
      const m = /^# expect: (\w+)(?: (\d+)(?::(\d+))?)?(?: (\w+))?/.exec(first);
      if (!m) throw new Error(`${name}: first line must be '# expect: CODE [LINE[:COL]] [SUGGESTION]'`);
      return {
        file,
        name,
        code: m[1]!,
        ...(m[2] ? { line: Number(m[2]) } : {}),
        ...(m[3] ? { col: Number(m[3]) } : {}),
        ...(m[4] ? { suggestion: m[4] } : {}),
      };
    });
}

/** The tools the bad and valid fixtures may name. */
export const FIXTURE_TOOLS = ['echo', 'find_city', 'local_time', 'city_facts', 'render_template', 'word_stats', 'json_query'];

const str = { type: 'string' } as const;
const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', additionalProperties: false, properties, required });

/** The schemas of those tools, for the data-flow check: as the shipped plugins declare them, abridged. */
export const FIXTURE_SIGNATURES: Record<string, { parameters?: Record<string, unknown>; returns?: Record<string, unknown> }> = {
  echo: {},
  find_city: {
    parameters: object({ text: str }, ['text']),
    returns: { type: 'object', properties: { city: str, country: str, timezone: str, confidence: { type: 'number' }, lat: { type: 'number' }, lng: { type: 'number' } } },
  },
  local_time: {
    parameters: object({ timezone: str, hour12: { type: 'boolean', default: false }, at: str }, ['timezone']),
    returns: { type: 'object', properties: { time: str, date: str, timezone: str } },
  },
  city_facts: {
    parameters: object({ city: str, country: str }, ['city']),
    returns: { type: 'object', properties: { city: str, population: { type: 'integer' }, lat: { type: 'number' }, lng: { type: 'number' } } },
  },
  render_template: { parameters: object({ template: str, values: { type: 'object', default: {} } }, ['template']), returns: { type: 'object', properties: { text: str } } },
  word_stats: { parameters: object({ text: str, path: str, top: { type: 'integer', default: 10 } }), returns: { type: 'object', properties: { words: { type: 'integer' } } } },
  json_query: {
    parameters: object({ value: {}, json: str, path: { type: 'string', pattern: '^\\$' }, aggregate: { type: 'string', enum: ['none', 'sum', 'count'], default: 'none' } }, ['path']),
    returns: { type: 'object', properties: { matches: { type: 'array' }, count: { type: 'integer' }, result: {} } },
  },
};
