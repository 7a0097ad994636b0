import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { type InRoot, isInside, realExisting } from './root.js';
import { type ToolContext, toolError } from './tool-context.js';

// The folders whose contents the engine itself runs or trusts, which write_file refuses whatever
// the files root is: a file written there is code the engine would run (a plugin's handler, hot
// reloaded), a chain it would run, or a cache entry it would read back as compiled code.
//   - the plugins folder: TOOLCHAIN_PLUGINS_DIR (the CLI sets it from --plugins), else ./plugins
//   - the chains folder:  TOOLCHAIN_CHAINS_DIR (the CLI sets it from --chains), else ./chains
//   - the cache folder:   TOOLCHAIN_CACHE_DIR, else $XDG_CACHE_HOME/toolchain (when absolute), else
//     ~/.cache/toolchain; none when caching is off
//   - any folder named `.toolchain` (the engine's working-directory cache) or `node_modules`
//     (packages that handlers import) anywhere on the path
// Relative folders are taken from the engine's working directory. Paths are compared after
// symbolic links are resolved, so a link inside the root that leads into one is refused too.

export const ENGINE_FOLDER_VARIABLES = ['TOOLCHAIN_PLUGINS_DIR', 'TOOLCHAIN_CHAINS_DIR', 'TOOLCHAIN_CACHE_DIR', 'TOOLCHAIN_CACHE', 'XDG_CACHE_HOME', 'HOME'] as const;

const PROTECTED_NAMES = new Set(['.toolchain', 'node_modules']);

type Env = Readonly<Record<string, string | undefined>>;

/** The engine's folders as absolute paths, each with what it is. */
export function engineFolders(env: Env, cwd = process.cwd()): { readonly what: string; readonly path: string }[] {
  const set = (name: string): string | undefined => (env[name] !== undefined && env[name] !== '' ? env[name] : undefined);
  const cache = cacheFolder(env, cwd);
  return [
    { what: 'the plugins folder', path: resolve(cwd, set('TOOLCHAIN_PLUGINS_DIR') ?? 'plugins') },
    { what: 'the chains folder', path: resolve(cwd, set('TOOLCHAIN_CHAINS_DIR') ?? 'chains') },
    ...(cache !== undefined ? [{ what: "the engine's cache folder", path: cache }] : []),
    { what: "the engine's working folder", path: resolve(cwd, '.toolchain') },
  ];
}

/**
 * The engine's per-user cache folder by the engine's own rule (src/cache/user-cache.ts, kept in
 * step by test/shipped/cache-dir.test.ts; a plugin imports nothing of the engine at run time):
 * none when caching is off, and a relative XDG_CACHE_HOME ignored as the XDG spec says — where
 * the engine then caches is ~/.cache/toolchain, and that is the folder to protect.
 */
export function cacheFolder(env: Env, cwd = process.cwd()): string | undefined {
  if (env.TOOLCHAIN_CACHE === 'off' || env.TOOLCHAIN_CACHE_DIR === 'off') return undefined;
  if (env.TOOLCHAIN_CACHE_DIR) return resolve(cwd, env.TOOLCHAIN_CACHE_DIR);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'toolchain');
  return join(env.HOME || homedir(), '.cache', 'toolchain');
}

/** Throws PROTECTED_PATH when `where` lies in one of the engine's folders. */
export async function refuseEngineFolders(where: InRoot, ctx?: Pick<ToolContext, 'env'>): Promise<void> {
  const env: Env = ctx ? ctx.env : process.env;
  const segment = relative(where.root, where.absolute).split(/[\\/]/).find((s) => PROTECTED_NAMES.has(s));
  if (segment !== undefined) {
    throw toolError('PROTECTED_PATH', `"${where.relative}" is inside a ${segment} folder, which write_file never changes: files there are run or trusted by the engine`);
  }
  for (const folder of engineFolders(env)) {
    const { real, missing } = await realExisting(folder.path);
    const path = missing.length ? join(real, ...missing) : real;
    if (isInside(path, where.absolute)) {
      throw toolError('PROTECTED_PATH', `"${where.relative}" is inside ${folder.what} (${folder.path}), which write_file never changes: the engine would run what is written there`);
    }
  }
}
