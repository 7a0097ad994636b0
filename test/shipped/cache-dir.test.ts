import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cacheFolder, ENGINE_FOLDER_VARIABLES } from '../../plugins/files/lib/engine-folders.js';
import writeFile from '../../plugins/files/tools/write_file.js';
import { cacheDir as geoCacheDir } from '../../plugins/geo/lib/city-names.js';
import { userCacheDir } from '../../src/cache/user-cache.js';
import { context, failure } from '../hostile/helpers.js';

// The per-user cache folder is named by one rule (src/cache/user-cache.ts) that two shipped
// plugins repeat, since a plugin imports nothing of the engine at run time: the geo plugin keeps
// its city index there, and write_file refuses to write there (the engine reads compiled code
// back from it). Where they disagree, write_file protects a folder the engine does not use and
// leaves open the one it does.

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'toolchain-home-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const ENVS: readonly Record<string, string>[] = [
  {},
  { TOOLCHAIN_CACHE_DIR: '/srv/cache' },
  { TOOLCHAIN_CACHE_DIR: 'relative/cache' },
  { TOOLCHAIN_CACHE_DIR: 'off' },
  { TOOLCHAIN_CACHE: 'off', XDG_CACHE_HOME: '/xdg' },
  { XDG_CACHE_HOME: '/xdg' },
  { XDG_CACHE_HOME: 'relative-xdg' },
  { XDG_CACHE_HOME: '', TOOLCHAIN_CACHE_DIR: '' },
];

describe('the cache folder, as the engine and the shipped plugins name it', () => {
  it.each(ENVS)('agrees for %j', (vars) => {
    const env = { HOME: home, ...vars };
    const engine = userCacheDir(env);
    expect(geoCacheDir(env)).toBe(engine);
    expect(cacheFolder(env)).toBe(engine);
  });

  it("write_file's manifest lets it read every variable the rule reads", async () => {
    const manifest = parse(await readFile(join(import.meta.dirname, '..', '..', 'plugins', 'files', 'plugin.yaml'), 'utf8')) as { env: string[] };
    expect(manifest.env).toEqual(expect.arrayContaining([...ENGINE_FOLDER_VARIABLES]));
  });

  it('with a relative XDG_CACHE_HOME, write_file refuses ~/.cache/toolchain, where the engine then caches', async () => {
    const root = home;
    await mkdir(join(root, '.cache', 'toolchain', 'modules'), { recursive: true });
    const env = { TOOLCHAIN_FILES_ROOT: root, HOME: home, XDG_CACHE_HOME: 'xdg' };
    const refused = await failure(writeFile({ path: '.cache/toolchain/modules/0123', content: 'export default 1' }, context(env)));
    expect(refused.code).toBe('PROTECTED_PATH');
    expect(await readdir(join(root, '.cache', 'toolchain', 'modules'))).toEqual([]);
  });
});
