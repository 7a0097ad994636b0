import { stat } from 'node:fs/promises';
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

/** The chains and plugins folders that do not exist: commands name them instead of finding nothing. */
export async function missingFolders(globals: { readonly chains: string; readonly plugins: string }): Promise<string[]> {
  const out: string[] = [];
  for (const dir of [globals.chains, globals.plugins]) {
    try {
      if (!(await stat(dir)).isDirectory()) out.push(dir);
    } catch {
      out.push(dir);
    }
  }
  return out;
}
