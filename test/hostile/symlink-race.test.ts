import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fileStats from '../../plugins/files/tools/file_stats.js';
import readFile from '../../plugins/files/tools/read_file.js';
import writeFileTool from '../../plugins/files/tools/write_file.js';
import { context, startSwapper } from './helpers.js';

// Hostile input, round two: 46 of 3,000 read_file calls returned a file outside
// TOOLCHAIN_FILES_ROOT while another process swapped a folder on the path for a symbolic link
// (check, then open). Files are now opened through a descriptor of their checked folder, never
// through a link, so however the race falls no call reaches outside the root.

const ROUNDS = 1500;
let base: string;
let root: string;
let outside: string;
let swapper: ChildProcess;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'toolchain-race-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'real'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'real', 'secret.txt'), 'inside');
  await writeFile(join(outside, 'secret.txt'), 'OUTSIDE-SECRET-LONGER');
  swapper = startSwapper(root, outside);
});
afterAll(async () => {
  if (swapper.pid !== undefined) swapper.kill('SIGKILL');
  await rm(base, { recursive: true, force: true });
});

/**
 * The same call with the swapper paused (SIGSTOP): the tool works at all, so the counts above it
 * are not vacuous — on a loaded machine every racing call may happen to find the folder moved.
 * A pause leaves the tree as the swapper's last step did, so the call goes on until it finds the
 * real folder back.
 */
async function calmly<T>(call: () => Promise<T>, inside: (r: T | { code: string }) => boolean): Promise<boolean> {
  swapper.kill('SIGSTOP');
  try {
    for (let i = 0; i < 50; i++) {
      if (inside(await attempt(call))) return true;
      swapper.kill('SIGCONT');
      await new Promise((r) => setTimeout(r, 1));
      swapper.kill('SIGSTOP');
    }
    return false;
  } finally {
    swapper.kill('SIGCONT');
  }
}

async function attempt<T>(call: () => Promise<T>): Promise<T | { code: string }> {
  try {
    return await call();
  } catch (error) {
    return { code: String((error as { code?: unknown }).code) };
  }
}

describe('a folder swapped for a symbolic link while the files tools run', () => {
  const ctx = () => context({ TOOLCHAIN_FILES_ROOT: root });

  it(`read_file never returns the outside file (${ROUNDS} calls)`, async () => {
    const texts = new Map<string, number>();
    for (let i = 0; i < ROUNDS; i += 1) {
      const r = await attempt(() => readFile({ path: 'real/secret.txt' }, ctx()));
      const key = 'text' in r ? r.text : r.code;
      texts.set(key, (texts.get(key) ?? 0) + 1);
    }
    expect(texts.get('OUTSIDE-SECRET-LONGER')).toBeUndefined();
    expect((texts.get('inside') ?? 0) > 0 || (await calmly(() => readFile({ path: 'real/secret.txt' }, ctx()), (r) => 'text' in r && r.text === 'inside'))).toBe(true);
  });

  it(`file_stats never describes the outside file (${ROUNDS} calls)`, async () => {
    let outsideSeen = 0;
    let insideSeen = 0;
    for (let i = 0; i < ROUNDS; i += 1) {
      const r = await attempt(() => fileStats({ path: 'real/secret.txt' }, ctx()));
      if ('size' in r && r.size === 'OUTSIDE-SECRET-LONGER'.length) outsideSeen += 1;
      if ('size' in r && r.size === 'inside'.length) insideSeen += 1;
    }
    const someInside = insideSeen > 0 || (await calmly(() => fileStats({ path: 'real/secret.txt' }, ctx()), (r) => 'size' in r && r.size === 'inside'.length));
    expect({ outsideSeen, someInside }).toEqual({ outsideSeen: 0, someInside: true });
  });

  it(`write_file never writes into the outside folder (${ROUNDS} calls)`, async () => {
    let written = 0;
    for (let i = 0; i < ROUNDS; i += 1) {
      const r = await attempt(() => writeFileTool({ path: `real/w${i % 50}.txt`, content: 'x', make_dirs: false }, ctx()));
      if ('bytes_written' in r) written += 1;
    }
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(written).toBeGreaterThan(0);
  });
});
