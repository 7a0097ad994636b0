import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type ToolContext, toolError } from './tool-context.js';

// The files root: every path a tool of this plugin (and of the plugins that require it: text's
// word_stats, shell's run_command) reads or writes must lie inside it.
// - The root is the TOOLCHAIN_FILES_ROOT environment variable (listed in the manifest's `env`,
//   so it reaches ctx.env), or the engine's working directory when that is unset.
// - Paths are relative to the root; an absolute path is accepted only if it lies inside it.
// - Refused with PATH_ESCAPE: `..` that climbs out, absolute paths elsewhere, and symbolic links
//   anywhere along the path that lead out (checked on the real path, after fs.realpath). For a
//   path that does not exist yet (write_file), its nearest existing ancestor is checked.
// read_file, write_file, file_stats and word_stats then open what was checked through a
// descriptor of its folder (pinned.ts), so a folder swapped for a link between the check and the
// access is refused instead of followed. list_files reads each folder, and run_command starts its
// program, through a descriptor of the checked folder (pinned.ts openPinnedFolder).

export const ROOT_VARIABLE = 'TOOLCHAIN_FILES_ROOT';

export interface InRoot {
  /** The real root directory. */
  readonly root: string;
  /** The absolute real path to use for the access (symbolic links resolved where it exists). */
  readonly absolute: string;
  /** The path relative to the root, with forward slashes ('.' for the root itself). */
  readonly relative: string;
  /** False when nothing exists at the path yet. */
  readonly exists: boolean;
}

/** The real path of the files root; ROOT_NOT_FOUND when it is not a directory. */
export async function filesRoot(ctx?: Pick<ToolContext, 'env'>): Promise<string> {
  const configured = ctx?.env[ROOT_VARIABLE];
  const root = resolve(configured && configured !== '' ? configured : process.cwd());
  try {
    const real = await realpath(root);
    if ((await stat(real)).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw toolError('ROOT_NOT_FOUND', `the files root "${root}" is not a directory; set ${ROOT_VARIABLE} to an existing folder`);
}

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

export function toPosix(rel: string): string {
  return rel === '' ? '.' : rel.split(sep).join('/');
}

/** Resolves `path` inside the root, or throws PATH_ESCAPE / BAD_PATH. */
export async function resolveInRoot(root: string, path: string): Promise<InRoot> {
  if (typeof path !== 'string' || path === '') throw toolError('BAD_PATH', 'the path must be a non-empty string');
  if (path.includes('\0')) throw toolError('BAD_PATH', 'the path contains a NUL character');
  const lexical = isAbsolute(path) ? resolve(path) : resolve(root, path);
  if (!isInside(root, lexical)) throw escape(path);
  const { real, missing } = await realExisting(lexical);
  if (!isInside(root, real)) throw escape(path, true);
  const absolute = missing.length ? join(real, ...missing) : real;
  return { root, absolute, relative: toPosix(relative(root, absolute)), exists: missing.length === 0 };
}

function escape(path: string, link = false): Error {
  const how = link ? 'through a symbolic link ' : '';
  return toolError('PATH_ESCAPE', `"${path}" leads ${how}outside the files root; use a path inside it, relative to the root`);
}

/** The real path of the deepest existing ancestor of `path`, and the names below it that do not exist. */
export async function realExisting(path: string): Promise<{ real: string; missing: string[] }> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return { real: await realpath(current), missing };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw toolError(code ?? 'FS_ERROR', `cannot resolve "${path}": ${(error as Error).message}`);
      if (await isLink(current)) {
        throw toolError('PATH_ESCAPE', `"${path}" goes through a symbolic link whose target does not exist, so where it leads cannot be checked`);
      }
      const parent = dirname(current);
      if (parent === current) return { real: current, missing };
      missing.unshift(current.slice(parent.length).replace(/^[\\/]+/, ''));
      current = parent;
    }
  }
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A readable error for a failed fs call, keeping Node's code (ENOENT, EACCES, EISDIR…). */
export function fsError(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return toolError('NOT_FOUND', `"${path}" does not exist under the files root`);
  if (code === 'EACCES' || code === 'EPERM') return toolError('ACCESS_DENIED', `"${path}" cannot be accessed: permission denied`);
  return toolError(code ?? 'FS_ERROR', `"${path}": ${(error as Error).message}`);
}
