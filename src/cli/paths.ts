import { isAbsolute, relative, resolve } from 'node:path';
import { formatDiagnostic, type Diagnostic } from '../common/errors.js';

/** A path as a person in `cwd` would type it: relative when inside, absolute otherwise. */
export function relativeTo(cwd: string, file: string): string {
  const abs = isAbsolute(file) ? file : resolve(cwd, file);
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

/** `FILE:LINE:COL CODE message` with the file as the person in `cwd` would name it. */
export function showDiagnostic(cwd: string, d: Diagnostic): string {
  return formatDiagnostic(d.file ? { ...d, file: relativeTo(cwd, d.file) } : d);
}
