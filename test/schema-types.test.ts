import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain JS build script without type declarations
import { generate, targets } from '../scripts/gen-types.js';
// @ts-expect-error -- a plain JS build script without type declarations
import { generateValidators, OUT } from '../scripts/gen-validators.js';
// @ts-expect-error -- a plain JS build script without type declarations
import { GRAMMAR_OUT, SCHEMAS, generateGrammar, generateSchema } from '../scripts/gen-grammars.js';

const REPO = join(import.meta.dirname, '..');

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
});
