import { constants, existsSync, promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type InRoot, fsError, isInside } from './root.js';
import { toolError } from './tool-context.js';

// A path checked inside the root, then opened, can lead elsewhere by the time it is opened: a
// process swapping a folder on the path for a symbolic link wins that race now and then. So the
// access does not go by the checked path. The folder that holds the entry is opened first, and
// the folder actually opened is checked (Linux names it in /proc/self/fd); the entry is then
// reached through that descriptor (`/proc/self/fd/N/name`, which works as openat does) and opened
// with O_NOFOLLOW, so neither a folder above it nor the entry itself can be swapped under the
// check. Where /proc/self/fd does not exist (macOS, Windows), the folder's real path is checked
// once more after it is opened: a narrower window, not none.

const PROC_FD = '/proc/self/fd';
const HAS_PROC_FD = existsSync(PROC_FD);
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

function swapped(path: string): Error {
  return toolError('PATH_ESCAPE', `"${path}" changed while it was being opened (a symbolic link appeared on the path); nothing outside the files root was touched`);
}

/**
 * Runs `use` with a path to `where` that goes through an open descriptor of its folder, checked
 * to be inside the root. The root itself is used as it is (its real path is where the check began).
 */
export async function withPinnedEntry<T>(where: InRoot, use: (entry: string) => Promise<T>): Promise<T> {
  if (where.relative === '.') return use(where.root);
  const folder = dirname(where.absolute);
  let dir: fs.FileHandle;
  try {
    dir = await fs.open(folder, constants.O_RDONLY | O_DIRECTORY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'ELOOP') throw swapped(where.relative);
    throw fsError(error, where.relative);
  }
  try {
    const real = HAS_PROC_FD ? await fs.readlink(`${PROC_FD}/${dir.fd}`) : await fs.realpath(folder);
    if (!isInside(where.root, real)) throw swapped(where.relative);
    return await use(HAS_PROC_FD ? `${PROC_FD}/${dir.fd}/${basename(where.absolute)}` : join(real, basename(where.absolute)));
  } finally {
    await dir.close();
  }
}

/** Opens `where` for `flags`, never through a symbolic link; a FIFO or device never blocks the open. */
export async function openPinned(where: InRoot, flags: number, mode = 0o666): Promise<{ handle: fs.FileHandle; close: () => Promise<void> }> {
  return withPinnedEntry(where, async (entry) => {
    try {
      const handle = await fs.open(entry, flags | O_NOFOLLOW | O_NONBLOCK, mode);
      return { handle, close: () => handle.close() };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw swapped(where.relative);
      throw fsError(error, where.relative);
    }
  });
}

/** lstat of `where` through its pinned folder; a symbolic link there now is a swap (the checked path had none). */
export async function statPinned(where: InRoot): Promise<import('node:fs').Stats> {
  return withPinnedEntry(where, async (entry) => {
    const info = await fs.lstat(entry).catch((error: unknown) => {
      throw fsError(error, where.relative);
    });
    if (info.isSymbolicLink()) throw swapped(where.relative);
    return info;
  });
}

/** A folder held open: `path` reaches the folder that was opened and checked, whatever happens to its name meanwhile. */
export interface PinnedFolder {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Opens the folder at `absolute` (a real path inside `root`) without following a link, and checks
 * the folder actually opened is inside the root. On Linux `path` goes through the descriptor
 * (`/proc/self/fd/N`: a child process started with it as its cwd inherits the descriptor until it
 * starts its program, so it changes into the checked folder); elsewhere it is the real path,
 * checked again after the open. `shown` names the folder in errors.
 */
export async function openPinnedFolder(root: string, absolute: string, shown: string): Promise<PinnedFolder> {
  let dir: fs.FileHandle;
  try {
    dir = await fs.open(absolute, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    // The checked path is real: a link at its end now is a swap.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw swapped(shown);
    throw fsError(error, shown);
  }
  try {
    const real = HAS_PROC_FD ? await fs.readlink(`${PROC_FD}/${dir.fd}`) : await fs.realpath(absolute);
    if (!isInside(root, real)) throw swapped(shown);
    return { path: HAS_PROC_FD ? `${PROC_FD}/${dir.fd}` : real, close: () => dir.close() };
  } catch (error) {
    await dir.close();
    throw error;
  }
}
