import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import listFiles from '../../plugins/files/tools/list_files.js';
import { MAX_GLOBSTARS, MAX_PATTERN_CHARS, MAX_STARS_PER_SEGMENT } from '../../plugins/files/lib/glob.js';
import { context, failure } from './helpers.js';

// Issue 14, item 2: `*a*a*a*a*a*a*a*a*b` against a 60-character `aaa…` name blocked the main
// thread for 119 s (a backtracking RegExp built from the glob). Globs now go through picomatch
// with limits that bound the backtracking any one pattern can cause.

let root: string;
const LONG = 'a'.repeat(200);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolchain-glob-'));
  await writeFile(join(root, LONG), 'x');
  await writeFile(join(root, `${'a'.repeat(60)}`), 'x');
  await writeFile(join(root, 'notes.md'), 'x');
});
afterAll(() => rm(root, { recursive: true, force: true }));

const call = (patterns: string[]) => listFiles({ patterns }, context({ TOOLCHAIN_FILES_ROOT: root }));

describe('list_files against hostile globs', () => {
  it('the 119-second pattern is refused with BAD_PATTERN before anything is matched', async () => {
    const f = await failure(call(['*a*a*a*a*a*a*a*a*b']));
    expect(f.code).toBe('BAD_PATTERN');
    expect(f.message).toContain(`at most ${MAX_STARS_PER_SEGMENT}`);
  });

  it('stars hidden in brace alternatives count too', async () => {
    expect((await failure(call(['{*a*a,*b}*a*b']))).code).toBe('BAD_PATTERN');
  });

  it('the most stars allowed still match a 200-character name of the worst kind', async () => {
    const result = await call(['*a*a*b', '*a*a*a']);
    expect(result.files.map((f) => f.path)).toContain(LONG);
  });

  it(`more than ${MAX_GLOBSTARS} '**' segments are refused`, async () => {
    expect((await failure(call([Array(MAX_GLOBSTARS + 1).fill('**').join('/') + '/x']))).code).toBe('BAD_PATTERN');
  });

  it(`a pattern over ${MAX_PATTERN_CHARS} characters is refused`, async () => {
    expect((await failure(call(['a'.repeat(MAX_PATTERN_CHARS + 1)]))).code).toBe('BAD_PATTERN');
  });

  it('extglobs, which nest quantifiers, are not interpreted: +(a|aa) is literal text', async () => {
    const result = await call(['+(a|aa)b', '*.md']);
    expect(result.files.map((f) => f.path)).toEqual(['notes.md']);
  });

  it('ignore patterns are held to the same limits', async () => {
    expect((await failure(listFiles({ ignore: ['*a*a*a*a*b'] }, context({ TOOLCHAIN_FILES_ROOT: root })))).code).toBe('BAD_PATTERN');
  });
});
