import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// A plugin file's source → CommonJS-shaped code that vm.compileFunction can run: TypeScript types
// stripped and ES module syntax rewritten by sucrase (a few ms a file; jiti's Babel took ~250 ms
// to load and ~25 ms a file). Results are kept on disk by content hash under
// node_modules/.cache/toolchain, so a cold `toolchain run` of unchanged plugins transforms
// nothing and never loads sucrase; an edited file gets a new entry. A cache that cannot be
// written is simply not used.

const require = createRequire(import.meta.url);
type Sucrase = typeof import('sucrase');
let sucrase: Sucrase | undefined;

// Bump when the options below change, so old entries are not reused.
const FORMAT = 'sucrase-3/cjs-es2022/import-meta-param/1';

// compileFunction evaluates a script, where `import.meta` is a syntax error: the transformed code
// reads it from a parameter instead (see evaluate-module.ts).
const IMPORT_META = /\bimport\.meta\b/g;
export const IMPORT_META_PARAM = '__import_meta';

let cacheDir: string | undefined | null;

function cacheDirectory(): string | undefined {
  if (cacheDir === undefined) {
    const dir = join(process.cwd(), 'node_modules', '.cache', 'toolchain', 'modules');
    try {
      mkdirSync(dir, { recursive: true });
      cacheDir = dir;
    } catch {
      cacheDir = null;
    }
  }
  return cacheDir ?? undefined;
}

export function transformModule(file: string, source: string): string {
  const isTs = /\.[cm]?tsx?$/.test(file);
  const dir = cacheDirectory();
  const key = createHash('sha256').update(FORMAT).update(isTs ? 'ts\0' : 'js\0').update(source).digest('hex').slice(0, 40);
  const cached = dir ? join(dir, `${key}.js`) : undefined;
  if (cached) {
    try {
      return readFileSync(cached, 'utf8');
    } catch {
      // not cached yet
    }
  }
  const code = transformNow(file, source, isTs);
  if (cached) {
    try {
      // Write then rename: a concurrent reader never sees half a file.
      const temp = `${cached}.${process.pid}.tmp`;
      writeFileSync(temp, code);
      renameSync(temp, cached);
    } catch {
      // A read-only or full disk only costs the next start a transform.
    }
  }
  return code;
}

function transformNow(file: string, source: string, isTs: boolean): string {
  sucrase ??= require('sucrase') as Sucrase;
  try {
    return sucrase.transform(source, {
      transforms: isTs ? ['typescript', 'imports'] : ['imports'],
      filePath: file,
      // Node 20 runs modern syntax as it is: only types and module syntax need rewriting.
      disableESTransforms: true,
      keepUnusedImports: false,
    }).code.replace(IMPORT_META, IMPORT_META_PARAM);
  } catch (error) {
    const e = error as { message?: string; loc?: { line: number; column: number } };
    const where = e.loc ? `${file}:${e.loc.line}:${e.loc.column + 1}` : file;
    throw new SyntaxError(`${e.message ?? 'cannot parse'} (${where})`);
  }
}
