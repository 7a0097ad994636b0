import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, readSync, statSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';

// The cache directory and its secret: the directory must be the current user's and writable by
// no one else, and the key file (32 random bytes, mode 0600) readable by no one else, or whoever
// could write or read them could make entries that pass as ours. On platforms without POSIX
// owners (Windows) the checks are skipped: the directory sits in the user's own profile.

export type KeyOutcome =
  | { readonly ok: true; readonly key: Buffer }
  /** `refused`: unsafe (warn about it); otherwise just unavailable (no such disk, read-only). */
  | { readonly ok: false; readonly refused: boolean; readonly reason: string };

const KEY_FILE = 'key';
const KEY_BYTES = 32;
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

function unsafe(stats: Stats, what: string, forbidden: number): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  if (stats.uid !== uid) return `${what} belongs to user ${stats.uid}, not to the current user (${uid})`;
  const mode = stats.mode & 0o777;
  if ((mode & forbidden) !== 0) return `${what} has mode ${mode.toString(8).padStart(4, '0')} (must not be ${forbidden === 0o022 ? 'group- or world-writable' : 'open to group or others'})`;
  return undefined;
}

const refuse = (reason: string): KeyOutcome => ({ ok: false, refused: true, reason });
const unavailable = (error: unknown): KeyOutcome => ({ ok: false, refused: false, reason: (error as Error).message });

type KeyRead = KeyOutcome | 'missing';

function readKey(file: string): KeyRead {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    return code === 'ELOOP' ? refuse('its key file is a symbolic link') : unavailable(error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return refuse('its key file is not a regular file');
    const problem = unsafe(stats, 'its key file', 0o077);
    if (problem) return refuse(problem);
    const key = Buffer.alloc(KEY_BYTES);
    if (stats.size !== KEY_BYTES || readSync(fd, key, 0, KEY_BYTES, 0) !== KEY_BYTES) return refuse(`its key file is not ${KEY_BYTES} bytes (delete it to make a new one)`);
    return { ok: true, key };
  } catch (error) {
    return unavailable(error);
  } finally {
    closeSync(fd);
  }
}

/** Written aside and linked into place, so two processes starting at once agree on one key. */
function createKey(file: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, randomBytes(KEY_BYTES), { flag: 'wx', mode: 0o600 });
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
}

/** Creates the directory (0700) and its key when missing, and checks both. */
export function openCacheKey(dir: string): KeyOutcome {
  let stats: Stats;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    stats = statSync(dir);
  } catch (error) {
    return unavailable(error);
  }
  if (!stats.isDirectory()) return refuse('it is not a directory');
  const problem = unsafe(stats, 'it', 0o022);
  if (problem) return refuse(problem);
  const file = join(dir, KEY_FILE);
  let read = readKey(file);
  if (read === 'missing') {
    try {
      createKey(file);
    } catch (error) {
      return unavailable(error);
    }
    read = readKey(file);
  }
  return read === 'missing' ? unavailable(new Error('its key file vanished')) : read;
}
