import { constants } from 'node:fs';
import { openPinned } from './pinned.js';
import { type InRoot, fsError, resolveInRoot } from './root.js';
import { toolError } from './tool-context.js';

// Reading a UTF-8 text file under the files root, shared by files/read_file and text/word_stats.
// Fails with NOT_FOUND, NOT_A_FILE, FILE_TOO_LARGE (checked before reading), NOT_TEXT (NUL bytes
// or invalid UTF-8), ACCESS_DENIED, or PATH_ESCAPE from the root rules.

export interface TextFile {
  readonly where: InRoot;
  readonly text: string;
  readonly bytes: number;
}

export async function readTextUnder(root: string, path: string, maxBytes: number, signal?: AbortSignal): Promise<TextFile> {
  const where = await resolveInRoot(root, path);
  // Opened through its checked folder (pinned.ts), then checked as what was opened.
  const { handle } = await openPinned(where, constants.O_RDONLY);
  try {
    const info = await fsCall(() => handle.stat(), where.relative);
    if (!info.isFile()) throw toolError('NOT_A_FILE', `"${where.relative}" is not a file`);
    if (info.size > maxBytes) throw toolError('FILE_TOO_LARGE', `"${where.relative}" has ${info.size} bytes; at most ${maxBytes} are read`);
    const bytes = await fsCall(() => handle.readFile(signal ? { signal } : {}), where.relative);
    if (bytes.length > maxBytes) throw toolError('FILE_TOO_LARGE', `"${where.relative}" has ${bytes.length} bytes; at most ${maxBytes} are read`);
    return { where, text: decodeUtf8(bytes, where.relative), bytes: bytes.length };
  } finally {
    await handle.close();
  }
}

export async function fsCall<T>(call: () => Promise<T>, path: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if ((error as Error | null)?.name === 'AbortError') throw error;
    throw fsError(error, path);
  }
}

function decodeUtf8(bytes: Uint8Array, path: string): string {
  if (bytes.includes(0)) throw toolError('NOT_TEXT', `"${path}" is not text: it contains NUL bytes`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw toolError('NOT_TEXT', `"${path}" is not UTF-8 text`);
  }
}
