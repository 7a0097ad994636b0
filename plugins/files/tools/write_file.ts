import { constants } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { openPinned } from '../lib/pinned.js';
import { dirname } from 'node:path';
import { refuseEngineFolders } from '../lib/engine-folders.js';
import { fsCall } from '../lib/read-text.js';
import { filesRoot, fsError, resolveInRoot } from '../lib/root.js';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// write_file (dangerous: every call needs approval): writes UTF-8 text under the files root.
// mode `overwrite` replaces, `append` adds, `create` refuses an existing file (ALREADY_EXISTS).
// Missing parent folders are created when make_dirs is true; they are inside the root by
// construction, since the path was checked first.
// The engine's own folders (plugins, chains, caches, any .toolchain or node_modules folder) are
// refused with PROTECTED_PATH whatever the root: see lib/engine-folders.ts.

interface Args {
  readonly path: string;
  readonly content: string;
  readonly mode?: 'overwrite' | 'append' | 'create';
  readonly make_dirs?: boolean;
}

const MAX_CONTENT = 10 * 1024 * 1024;

export default async function writeFile(args: Args, ctx?: ToolContext): Promise<{ path: string; bytes_written: number; created: boolean }> {
  const { content, mode = 'overwrite', make_dirs = true } = args;
  if (typeof content !== 'string') throw toolError('BAD_ARGUMENT', 'content must be a string');
  const bytes = Buffer.byteLength(content);
  if (bytes > MAX_CONTENT) throw toolError('CONTENT_TOO_LARGE', `content has ${bytes} bytes; at most ${MAX_CONTENT} are written`);
  const root = await filesRoot(ctx);
  const where = await resolveInRoot(root, args.path);
  if (where.relative === '.') throw toolError('NOT_A_FILE', 'the files root itself is a folder, not a file');
  await refuseEngineFolders(where, ctx);
  if (make_dirs) await fsCall(() => mkdir(dirname(where.absolute), { recursive: true }), where.relative);
  const options = { encoding: 'utf8' as const, ...(ctx ? { signal: ctx.signal } : {}) };
  // Opened through its checked folder, never through a link (pinned.ts); truncated only once it
  // is known to be the regular file inside the root.
  const flags = constants.O_WRONLY | constants.O_CREAT | (mode === 'create' ? constants.O_EXCL : 0) | (mode === 'append' ? constants.O_APPEND : 0);
  try {
    const { handle } = await openPinned(where, flags);
    try {
      if (!(await handle.stat()).isFile()) throw toolError('NOT_A_FILE', `"${where.relative}" is not a regular file`);
      if (mode === 'overwrite') await handle.truncate(0);
      await handle.writeFile(content, options);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw toolError('ALREADY_EXISTS', `"${where.relative}" already exists; use mode overwrite or append to change it`);
    if (code === 'EISDIR') throw toolError('NOT_A_FILE', `"${where.relative}" is a folder`);
    // Already a tool's error (pinned.ts turned the fs error into one, or a check above failed).
    if (typeof (error as NodeJS.ErrnoException).errno !== 'number') throw error;
    throw fsError(error, where.relative);
  }
  return { path: where.relative, bytes_written: bytes, created: !where.exists };
}
