import type { Stats } from 'node:fs';
import { closeSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Diagnostic } from '../common/errors.js';
import { loadDiagnostic, START } from './diagnostic.js';
import { resolveLimits } from './limits.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { parseYaml } from './parse-yaml.js';
import type { LoadLimits, LoadResult } from './types.js';

// The path is stat-ed before it is opened (a FIFO would block open, a directory or a huge file
// should not be read at all), and the open handle is stat-ed again so a file swapped in between
// is still held to the limit. parseYaml re-checks the text length as a last line.

function unreadable(path: string, error: unknown): LoadResult {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === 'ENOENT' ? 'no such file' : code ?? (error instanceof Error ? error.message : String(error));
  return { diagnostics: [loadDiagnostic('FILE_UNREADABLE', `cannot read file: ${reason}`, path, START)] };
}

function rejectStats(path: string, stats: Stats, maxBytes: number): Diagnostic | undefined {
  if (!stats.isFile()) return loadDiagnostic('FILE_UNREADABLE', 'cannot read file: not a regular file', path, START);
  if (stats.size > maxBytes) {
    return loadDiagnostic('FILE_TOO_LARGE', `${stats.size} bytes is over the limit of ${maxBytes} bytes`, path, START);
  }
  return undefined;
}

/** Reads a file as text, held to the size limit, without parsing it (for callers that cache by content). */
export async function readTextFile(path: string, limits?: Partial<LoadLimits>): Promise<{ text: string } | { diagnostics: Diagnostic[] }> {
  const lim = resolveLimits(limits);
  try {
    const rejected = rejectStats(path, await stat(path), lim.maxBytes);
    if (rejected) return { diagnostics: [rejected] };
    const handle = await open(path, 'r');
    try {
      const again = rejectStats(path, await handle.stat(), lim.maxBytes);
      if (again) return { diagnostics: [again] };
      return { text: await handle.readFile({ encoding: 'utf8' }) };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { diagnostics: [...unreadable(path, error).diagnostics] };
  }
}

/** `cache`: see parseYaml. */
export async function loadYamlFile(path: string, limits?: Partial<LoadLimits>, cache?: DiskCache): Promise<LoadResult> {
  const read = await readTextFile(path, limits);
  return 'text' in read ? parseYaml(read.text, path, resolveLimits(limits), cache) : { diagnostics: read.diagnostics };
}

export function loadYamlFileSync(path: string, limits?: Partial<LoadLimits>): LoadResult {
  const lim = resolveLimits(limits);
  let text: string;
  try {
    const rejected = rejectStats(path, statSync(path), lim.maxBytes);
    if (rejected) return { diagnostics: [rejected] };
    const fd = openSync(path, 'r');
    try {
      const again = rejectStats(path, fstatSync(fd), lim.maxBytes);
      if (again) return { diagnostics: [again] };
      text = readFileSync(fd, { encoding: 'utf8' });
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return unreadable(path, error);
  }
  return parseYaml(text, path, lim);
}
