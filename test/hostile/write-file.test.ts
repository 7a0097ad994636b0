import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile as fsWrite } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import writeFile from '../../plugins/files/tools/write_file.js';
import { createEngine } from '../../src/index.js';
import { runCli } from '../helpers/run-cli.js';
import { context, failure } from './helpers.js';

// With the files root at the working directory, an approved write_file could
// write a handler into plugins/ (hot reload then runs it) or an entry into the engine's caches.
// The engine's own folders are now refused whatever the root.

let project: string;
let cache: string;

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'toolchain-write-'));
  cache = await mkdtemp(join(tmpdir(), 'toolchain-cache-'));
  await mkdir(join(project, 'plugins', 'evil', 'tools'), { recursive: true });
  await mkdir(join(project, 'chains'));
  await mkdir(join(project, 'docs'));
  await symlink(join(project, 'plugins'), join(project, 'docs', 'shortcut'));
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
  await rm(cache, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({
  TOOLCHAIN_FILES_ROOT: project,
  TOOLCHAIN_PLUGINS_DIR: join(project, 'plugins'),
  TOOLCHAIN_CHAINS_DIR: join(project, 'chains'),
  TOOLCHAIN_CACHE_DIR: cache,
});
const write = (path: string, e: Record<string, string> = env()) => writeFile({ path, content: 'export default () => 1' }, context(e));

describe('write_file refuses the engine folders', () => {
  it('a handler written into the plugins folder is refused with PROTECTED_PATH and nothing is written', async () => {
    const f = await failure(write('plugins/evil/tools/pwn.ts'));
    expect(f.code).toBe('PROTECTED_PATH');
    expect(f.message).toContain('plugins folder');
    expect(await readdir(join(project, 'plugins', 'evil', 'tools'))).toEqual([]);
  });

  it('a new plugin folder (make_dirs) is refused before any folder is created', async () => {
    expect((await failure(write('plugins/new/plugin.yaml'))).code).toBe('PROTECTED_PATH');
    expect(await readdir(join(project, 'plugins'))).toEqual(['evil']);
  });

  it('a chain file is refused', async () => {
    expect((await failure(write('chains/run-me.yaml'))).code).toBe('PROTECTED_PATH');
  });

  it('.toolchain and node_modules folders are refused anywhere on the path', async () => {
    expect((await failure(write('.toolchain/cache/yaml/0123'))).code).toBe('PROTECTED_PATH');
    expect((await failure(write('docs/.toolchain/x'))).code).toBe('PROTECTED_PATH');
    expect((await failure(write('node_modules/left-pad/index.js'))).code).toBe('PROTECTED_PATH');
  });

  it('a symbolic link inside the root that leads into the plugins folder is refused', async () => {
    expect((await failure(write('docs/shortcut/evil/tools/pwn.ts'))).code).toBe('PROTECTED_PATH');
  });

  it('the cache folder is refused even when the files root contains it', async () => {
    const e = { ...env(), TOOLCHAIN_FILES_ROOT: cache };
    expect((await failure(write('validators/x.js', e))).code).toBe('PROTECTED_PATH');
  });

  it('without the variables, ./plugins and ./chains of the working directory are the defaults', async () => {
    const e = { TOOLCHAIN_FILES_ROOT: process.cwd(), TOOLCHAIN_CACHE_DIR: cache };
    expect((await failure(write('plugins/files/tools/evil.ts', e))).code).toBe('PROTECTED_PATH');
    expect((await failure(write('chains/evil.yaml', e))).code).toBe('PROTECTED_PATH');
  });

  it('ordinary files under the root are still written', async () => {
    expect(await write('docs/notes.md')).toMatchObject({ path: 'docs/notes.md', created: true });
  });

  it('through the engine, an approved write_file cannot plant a plugin handler', async () => {
    await mkdir(join(project, 'pchains'));
    await fsWrite(
      join(project, 'pchains', 'plant.yaml'),
      'name: plant\nsteps:\n  - name: w\n    tool: write_file\n    input_map: { path: plugins/evil/tools/pwn.ts, content: "export default () => 1" }\n',
    );
    const engine = await createEngine({ chainsDir: join(project, 'pchains'), pluginsDir: join(import.meta.dirname, '..', '..', 'plugins') });
    try {
      const saved = { ...process.env };
      Object.assign(process.env, env());
      try {
        const result = await engine.run('plant', {}, { approve: () => true });
        expect(result.error?.code).toBe('PROTECTED_PATH');
      } finally {
        for (const k of Object.keys(env())) if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    } finally {
      await engine.close();
    }
    expect(await readdir(join(project, 'plugins', 'evil', 'tools'))).toEqual([]);
  });

  it('the CLI tells tools its --plugins folder, so a folder with another name is protected too', async () => {
    await cp(join(import.meta.dirname, '..', '..', 'plugins', 'files'), join(project, 'my-plugins', 'files'), { recursive: true });
    await mkdir(join(project, 'my-chains'));
    await fsWrite(
      join(project, 'my-chains', 'plant.yaml'),
      'name: plant\nsteps:\n  - name: w\n    tool: write_file\n    input_map: { path: my-plugins/files/tools/pwn.ts, content: "export default () => 1" }\n',
    );
    const out = await runCli(['run', 'plant', '--plugins', 'my-plugins', '--chains', 'my-chains', '--approve', 'write_file'], {
      cwd: project,
      env: { TOOLCHAIN_FILES_ROOT: project, TOOLCHAIN_CACHE_DIR: cache },
    });
    expect(out.stderr).toContain('PROTECTED_PATH');
    expect(out.code).toBe(1);
    expect(await readdir(join(project, 'my-plugins', 'files', 'tools'))).not.toContain('pwn.ts');
  });
});
