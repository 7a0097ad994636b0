import { statSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';

// Where a relative import inside a plugin points. TypeScript authors write `./lib.js` for
// `./lib.ts` (NodeNext style), or leave the extension off; both resolve here the way tsc and bundlers
// resolve them. Bare specifiers (packages, `node:` builtins) are not ours: undefined.

/** The module kinds evaluated fresh on every load. */
export const MODULE_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'] as const;
const TS_TWIN: Record<string, string[]> = { '.js': ['.ts'], '.mjs': ['.mts'], '.cjs': ['.cts'] };

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isLocalSpecifier(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..' || isAbsolute(specifier);
}

/**
 * `known`: files a version of the plugin has read already (evaluate-module.ts): one of them is
 * the answer before any file on disk, so that a file added since does not change what resolves.
 */
export function resolveLocal(specifier: string, fromFile: string, known?: (file: string) => boolean): string | undefined {
  if (!isLocalSpecifier(specifier)) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const ext = extname(base);
  const candidates = [base, ...(TS_TWIN[ext] ?? []).map((twin) => base.slice(0, -ext.length) + twin), ...[...MODULE_EXTENSIONS, '.json'].flatMap((e) => [base + e, `${base}/index${e}`])];
  if (known !== undefined) {
    const kept = candidates.find(known);
    if (kept !== undefined) return kept;
  }
  return candidates.find(isFile);
}
