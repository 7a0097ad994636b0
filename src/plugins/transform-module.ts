import { createRequire } from 'node:module';
import { cacheKey, type DiskCache } from '../cache/disk-cache.js';

// A plugin file's source → CommonJS-shaped code that vm.compileFunction can run: TypeScript types
// stripped and ES module syntax rewritten by sucrase, the engine's one transpiler (it only strips
// and rewrites, which is all Node 20 needs, and loads in a fraction of the time of Babel-based
// ones). Results are kept in the per-user disk cache by content hash, so a cold `toolchain run` of unchanged plugins transforms nothing and never loads sucrase. The cache
// authenticates its entries (cache/disk-cache.ts): code read back is code this user's engine
// transformed from the same source, never text someone else left in a folder.

const require = createRequire(import.meta.url);
type Sucrase = typeof import('sucrase');
let sucrase: Sucrase | undefined;

// Bump when the options below change, so old entries are not reused.
const FORMAT = 'sucrase-3/cjs-es2022/import-meta-param/1';

// compileFunction evaluates a script, where `import.meta` is a syntax error: the transformed code
// reads it from a parameter instead (see evaluate-module.ts).
const IMPORT_META = /\bimport\.meta\b/g;
export const IMPORT_META_PARAM = '__import_meta';

export function transformModule(file: string, source: string, cache?: DiskCache): string {
  const isTs = /\.[cm]?tsx?$/.test(file);
  if (!cache) return transformNow(file, source, isTs);
  const key = cacheKey(FORMAT, isTs ? 'ts' : 'js', source);
  const cached = cache.read('modules', key);
  if (cached !== undefined) return cached;
  const code = transformNow(file, source, isTs);
  cache.write('modules', key, code);
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
