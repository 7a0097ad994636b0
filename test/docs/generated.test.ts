import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_KINDS } from '../../src/common/errors.js';
// @ts-expect-error -- a plain JS build script without type declarations
import { targets } from '../../scripts/gen-docs.js';
import { REPO } from '../helpers/run-cli.js';

// The reference pages made from a source of truth — the chain and plugin schemas, the table of
// error codes — are regenerated here and compared: an edit to a schema or a new code without
// `npm run gen:docs` fails, and so does a code without an explanation in docs/reference/errors.yaml.

describe('the generated reference pages', () => {
  for (const target of targets as { out: string; generate: () => Promise<string> }[]) {
    it(`${target.out} is what \`npm run gen:docs\` writes`, async () => {
      expect(await readFile(join(REPO, target.out), 'utf8')).toBe(await target.generate());
    });
  }

  it('every error code (ERROR_KINDS) has a heading of its own in docs/reference/errors.md', async () => {
    const codes = Object.keys(ERROR_KINDS);
    expect(codes.length).toBeGreaterThan(40);
    const page = await readFile(join(REPO, 'docs/reference/errors.md'), 'utf8');
    const headings = new Set([...page.matchAll(/^### ([A-Z0-9_]+)$/gm)].map((m) => m[1]!));
    expect(codes.filter((c) => !headings.has(c))).toEqual([]);
    expect([...headings].filter((h) => !codes.includes(h))).toEqual([]);
  });
});
