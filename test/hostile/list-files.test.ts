import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import listFiles from '../../plugins/files/tools/list_files.js';
import { MAX_GLOBSTARS, MAX_PATTERN_CHARS, MAX_STARS_PER_SEGMENT } from '../../plugins/files/lib/glob.js';
import { context, failure } from './helpers.js';
import { REPO, runCli } from '../helpers/run-cli.js';

const PLUGINS = join(REPO, 'plugins');

// `*a*a*a*a*a*a*a*a*b` against a 60-character `aaa…` name blocked the main
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

// Round two: within those limits picomatch's regular expressions still backtracked for minutes:
// `**/*a*a*a/**/*a*a*a/…/b` against one 40-level-deep path. Globs now match in linear time.
describe('list_files on a deep tree with the most complex pattern the limits allow', () => {
  let project: string;
  const DEPTH = 40;
  const NAME = 'a'.repeat(12);
  const pattern = `${'**/*a*a*a/'.repeat(MAX_GLOBSTARS)}b`;
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'toolchain-glob-deep-'));
    const deep = join(project, 'files', ...Array<string>(DEPTH).fill(NAME));
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'c'), 'x');
    await writeFile(join(deep, 'b'), 'x');
    await mkdir(join(project, 'chains'));
    await writeFile(join(project, 'chains', 'deep.yaml'), 'name: deep\ninputs: { patterns: array }\nsteps:\n  - name: list\n    tool: list_files\n    timeout: 5s\n    input_map: { patterns: $.patterns }\noutputs: { count: $.list.count }\n');
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  // A child process: on a backtracking matcher this is a CLI stuck at full CPU, which the helper
  // kills, so the test fails instead of the suite hanging.
  it('answers, through the CLI, whether or not the file is there', async () => {
    const env = { TOOLCHAIN_FILES_ROOT: join(project, 'files') };
    const miss = await runCli(['--plugins', PLUGINS, 'run', 'deep', '--input-json', JSON.stringify({ patterns: [pattern.replace(/b$/, 'z')] })], { cwd: project, env });
    expect(miss.code).toBe(0);
    expect(JSON.parse(miss.stdout)).toEqual({ count: 0 });
    const hit = await runCli(['--plugins', PLUGINS, 'run', 'deep', '--input-json', JSON.stringify({ patterns: [pattern] })], { cwd: project, env });
    expect(JSON.parse(hit.stdout)).toEqual({ count: 1 });
  });

  it('matches as documented: braces with slashes, classes, hidden names, escapes', async () => {
    const where = await mkdtemp(join(tmpdir(), 'toolchain-glob-kinds-'));
    try {
      for (const f of ['src/a.ts', 'src/b.js', 'src/c.md', 'x/y/z.ts', '.hidden/h.md', 'd/.e/f.md', 'g/h.md', 'star*.txt', 'c1.md']) {
        await mkdir(join(where, f, '..'), { recursive: true });
        await writeFile(join(where, f), 'x');
      }
      const list = async (patterns: string[], dot = false) =>
        (await listFiles({ patterns, dot }, context({ TOOLCHAIN_FILES_ROOT: where }))).files.map((f) => f.path).sort();
      expect(await list(['src/*.{ts,js}'])).toEqual(['src/a.ts', 'src/b.js']);
      expect(await list(['{src,x/y}/*.ts'])).toEqual(['src/a.ts', 'x/y/z.ts']);
      expect(await list(['**/*.md'])).toEqual(['c1.md', 'g/h.md', 'src/c.md']);
      expect(await list(['**/*.md'], true)).toEqual(['.hidden/h.md', 'c1.md', 'd/.e/f.md', 'g/h.md', 'src/c.md']);
      expect(await list(['.hidden/*'])).toEqual(['.hidden/h.md']);
      expect(await list(['[!s]*/*.md'])).toEqual(['g/h.md']);
      expect(await list(['c?.md', 'star\\*.txt'])).toEqual(['c1.md', 'star*.txt']);
    } finally {
      await rm(where, { recursive: true, force: true });
    }
  });
});
