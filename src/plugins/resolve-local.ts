import { statSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';

// Where a relative import inside a plugin points. TypeScript authors write `./lib.js` for
// `./lib.ts` (NodeNext style), or leave the extension off; both resolve here the way tsc and jiti
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

export function resolveLocal(specifier: string, fromFile: string): string | undefined {
  if (!isLocalSpecifier(specifier)) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  if (isFile(base)) return base;
  const ext = extname(base);
  for (const twin of TS_TWIN[ext] ?? []) {
    const candidate = base.slice(0, -ext.length) + twin;
    if (isFile(candidate)) return candidate;
  }
  for (const candidate of [...MODULE_EXTENSIONS, '.json'].flatMap((e) => [base + e, `${base}/index${e}`])) {
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}
