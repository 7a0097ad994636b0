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
export const FIXTURE_TOOLS = ['echo', 'find_city', 'local_time', 'city_facts', 'render_template', 'word_stats'];
