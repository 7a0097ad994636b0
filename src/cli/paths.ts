import { isAbsolute, relative, resolve } from 'node:path';

/** A path as a person in `cwd` would type it: relative when inside, absolute otherwise. */
export function relativeTo(cwd: string, file: string): string {
  const abs = isAbsolute(file) ? file : resolve(cwd, file);
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}
