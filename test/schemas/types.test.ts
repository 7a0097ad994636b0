import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain JS build script without type declarations
import { generate, targets } from '../../scripts/gen-types.js';
// @ts-expect-error -- a plain JS build script without type declarations
import { FAST_PATTERNS, generateValidators, OUT } from '../../scripts/gen-validators.js';
// @ts-expect-error -- a plain JS build script without type declarations
import { GRAMMAR_OUT, SCHEMAS, generateGrammar, generateSchema } from '../../scripts/gen-grammars.js';

const REPO = join(import.meta.dirname, '..', '..');

// The schemas are the source of truth; the TypeScript types are derived from them. This fails
// when someone edits one without the other: run `npm run gen:types`.
describe('types derived from the schemas', () => {
  for (const target of targets as { schema: string; out: string }[]) {
    it(`${target.out} matches ${target.schema}`, async () => {
      const expected = (await generate(target)) as string;
      expect(await readFile(join(REPO, target.out), 'utf8')).toBe(expected);
    });
  }

  it('the duration grammar in the engine is the one generated', async () => {
    expect(await readFile(join(REPO, GRAMMAR_OUT as string), 'utf8')).toBe(generateGrammar() as string);
  });

  for (const schema of SCHEMAS as string[]) {
    it(`${schema} holds the generated duration grammar`, async () => {
      expect(await readFile(join(REPO, schema), 'utf8')).toBe((await generateSchema(schema)) as string);
    });
  }

  it(`the precompiled validators match the schemas`, async () => {
    expect(await readFile(join(REPO, OUT as string), 'utf8')).toBe((await generateValidators()) as string);
  });

  // The generated validators test a requirement against a short pattern before the schema's
  // 5,000-character one: the short one must accept nothing the schema's pattern rejects.
  it('the short requirement pattern accepts only what the schema pattern accepts', async () => {
    const schema = JSON.parse(await readFile(join(REPO, 'schemas/plugin.schema.json'), 'utf8')) as { properties: { requires: { items: { pattern: string } } } };
    const full = new RegExp(schema.properties.requires.items.pattern, 'u');
    const { fast } = (FAST_PATTERNS as { requirement: { fast: string } }).requirement;
    const short = new RegExp(fast, 'u');
    for (const common of ['text', 'text >= 1.0.0', 'text ^1.2', 'geo 1.x', ' geo  ~1.2.3 ', 'a-b_c <2', 'text =v1.0.0']) expect(short.test(common)).toBe(true);
    const parts = ['text', ' ', '  ', '>', '<', '=', '^', '~', 'v', '0', '1', '12', '01', '.', 'x', '*', '-', '+', 'a', '|', '\t', '_', 'é'];
    let state = 7;
    const next = (n: number): number => ((state = (state * 1103515245 + 12345) % 2147483648), state % n);
    for (let i = 0; i < 50_000; i++) {
      let s = next(4) === 0 ? '' : 'geo';
      for (let k = next(9); k > 0; k--) s += parts[next(parts.length)];
      if (short.test(s)) expect(full.test(s), s).toBe(true);
    }
  });
});
