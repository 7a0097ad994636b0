import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import listFiles from '../../plugins/files/tools/list_files.js';
import runCommand from '../../plugins/shell/tools/run_command.js';
import { context, failure, startSwapper } from './helpers.js';

// run_command's `cwd` and the folders list_files walks were checked inside TOOLCHAIN_FILES_ROOT
// and then used by name: a folder on the path swapped for a symbolic link to outside the root
// between the check and the use sent the program there (its `cat marker` printed the outside
// file), and listed the outside folder's files. Both now go through a descriptor of the folder
// that was checked. What a caller gives outright (`..`, an absolute path elsewhere, a link out)
// is refused with PATH_ESCAPE, as the files tools refuse it.

const ROUNDS = 400;
let base: string;
let root: string;
let outside: string;
let swapper: ChildProcess | undefined;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'toolchain-cwd-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'real', 'deep'), { recursive: true });
  await mkdir(join(root, 'still'), { recursive: true });
  await mkdir(join(outside, 'deep'), { recursive: true });
  await writeFile(join(root, 'real', 'marker'), 'inside');
  await writeFile(join(root, 'real', 'deep', 'inside.txt'), 'x');
  await writeFile(join(outside, 'marker'), 'OUTSIDE');
  await writeFile(join(outside, 'deep', 'outside-only.txt'), 'x');
  await symlink(outside, join(root, 'out-link'));
});
afterAll(async () => {
  if (swapper?.pid !== undefined) swapper.kill('SIGKILL');
  await rm(base, { recursive: true, force: true });
});

const ctx = () => context({ TOOLCHAIN_FILES_ROOT: root, PATH: process.env.PATH });

describe('a cwd outside the files root is refused', () => {
  for (const cwd of ['..', 'still/../..', '/tmp', 'out-link', 'out-link/deep']) {
    it(`run_command refuses cwd ${JSON.stringify(cwd)} with PATH_ESCAPE, before the program starts`, async () => {
      const f = await failure(runCommand({ command: 'sh', args: ['-c', 'echo started > started.txt'], cwd }, ctx()));
      expect(f.code).toBe('PATH_ESCAPE');
    });
  }

  it('run_command runs in a folder inside the root, given relative or absolute', async () => {
    expect((await runCommand({ command: 'cat', args: ['marker'], cwd: 'real' }, ctx())).stdout).toBe('inside');
    expect((await runCommand({ command: 'pwd', args: ['-P'], cwd: join(root, 'still') }, ctx())).stdout.trim()).toBe(join(root, 'still'));
  });

  it('list_files refuses a pattern whose folder is outside, and lists no file behind a folder link out', async () => {
    expect((await failure(listFiles({ patterns: ['../**/*'] }, ctx()))).code).toBe('PATH_ESCAPE');
    expect((await failure(listFiles({ patterns: ['out-link/**/*'] }, ctx()))).code).toBe('PATH_ESCAPE');
    const all = await listFiles({ patterns: ['**/*'] }, ctx());
    expect(all.files.map((f) => f.path)).toEqual(['real/deep/inside.txt', 'real/marker']);
  });
});

describe('a folder swapped for a link to outside while the tools use it', () => {
  beforeAll(() => {
    swapper = startSwapper(root, outside);
  });

  it(`run_command never runs its program in the outside folder (${ROUNDS} calls with cwd real)`, async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < ROUNDS; i++) {
      let key: string;
      try {
        const r = await runCommand({ command: 'cat', args: ['marker'], cwd: 'real' }, ctx());
        key = r.exit_code === 0 ? r.stdout : `exit ${r.exit_code}`;
      } catch (error) {
        key = String((error as { code?: unknown }).code);
      }
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect(seen.get('OUTSIDE')).toBeUndefined();
    expect(seen.get('inside')).toBeGreaterThan(0);
  }, 120_000);

  it(`list_files never lists the outside folder's files (${ROUNDS} calls over real/**)`, async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < ROUNDS; i++) {
      let keys: string[];
      try {
        keys = (await listFiles({ patterns: ['real/**/*', 'parked/**/*'] }, ctx())).files.map((f) => f.path.replace(/^(real|parked)\//, ''));
      } catch (error) {
        keys = [String((error as { code?: unknown }).code)];
      }
      for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect(seen.get('deep/outside-only.txt')).toBeUndefined();
    expect(seen.get('deep/inside.txt')).toBeGreaterThan(0);
  }, 120_000);
});
