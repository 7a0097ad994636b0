import { realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { MODULE_EXTENSIONS } from './resolve-local.js';

// Where a tool's handler lives. `handler: tools/find_city.ts#findCity` names a file inside the
// plugin folder and, after `#`, an export; without `handler:` the file is `tools/<name>.<ext>`.
// A path that leaves the folder — `../`, absolute, or a symlink pointing out (checked on the real
// path) — is refused with HANDLER_ESCAPE: a manifest must not make the engine run arbitrary files.

export type HandlerLocation =
  | { readonly ok: true; readonly file: string; readonly exportName?: string }
  | { readonly ok: false; readonly code: 'HANDLER_ESCAPE' | 'HANDLER_LOAD'; readonly message: string };

/** Default handler extensions, in the order they are tried. */
export const HANDLER_EXTENSIONS = ['.ts', '.js', '.mjs', '.cjs', '.mts', '.cts'] as const;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

async function confine(realDir: string, candidate: string, shown: string): Promise<HandlerLocation> {
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return { ok: false, code: 'HANDLER_LOAD', message: `handler file '${shown}' does not exist` };
  }
  if (!inside(realDir, real)) {
    return { ok: false, code: 'HANDLER_ESCAPE', message: `handler '${shown}' resolves through a symlink to ${real}, outside the plugin folder` };
  }
  if (!(await isFile(real))) return { ok: false, code: 'HANDLER_LOAD', message: `handler '${shown}' is not a file` };
  return { ok: true, file: real };
}

/** `realDir` must already be the plugin folder's real path. */
export async function resolveHandler(realDir: string, toolName: string, spec: string | undefined): Promise<HandlerLocation> {
  const hash = spec?.lastIndexOf('#') ?? -1;
  const pathPart = spec === undefined ? '' : hash >= 0 ? spec.slice(0, hash) : spec;
  const exportName = spec !== undefined && hash >= 0 ? spec.slice(hash + 1) : undefined;
  const withExport = (found: HandlerLocation): HandlerLocation =>
    found.ok && exportName ? { ...found, exportName } : found;

  if (pathPart === '') {
    for (const ext of HANDLER_EXTENSIONS) {
      const candidate = join(realDir, 'tools', `${toolName}${ext}`);
      if (await isFile(candidate)) return withExport(await confine(realDir, candidate, `tools/${toolName}${ext}`));
    }
    return {
      ok: false,
      code: 'HANDLER_LOAD',
      message: `no handler for tool '${toolName}': add tools/${toolName}.ts (or .js, .mjs, .cjs), or set \`handler:\``,
    };
  }
  if (isAbsolute(pathPart) || /^[A-Za-z]:[\\/]/.test(pathPart)) {
    return { ok: false, code: 'HANDLER_ESCAPE', message: `handler '${pathPart}' is an absolute path; give a path inside the plugin folder` };
  }
  const candidate = resolve(realDir, pathPart);
  if (!inside(realDir, candidate)) {
    return { ok: false, code: 'HANDLER_ESCAPE', message: `handler '${pathPart}' points outside the plugin folder` };
  }
  if (extname(candidate) === '' && !(await isFile(candidate))) {
    for (const ext of MODULE_EXTENSIONS) {
      if (await isFile(candidate + ext)) return withExport(await confine(realDir, candidate + ext, pathPart + ext));
    }
  }
  return withExport(await confine(realDir, candidate, pathPart));
}
