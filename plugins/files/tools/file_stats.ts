import { lstat } from 'node:fs/promises';
import { statPinned } from '../lib/pinned.js';
import { resolve } from 'node:path';
import { fsCall } from '../lib/read-text.js';
import { filesRoot, resolveInRoot } from '../lib/root.js';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// file_stats: what is at a path under the files root. Symbolic links are followed (and must stay
// inside the root); `link` says whether the path itself was one.

interface Args {
  readonly path: string;
}

export interface FileStats {
  readonly path: string;
  readonly type: 'file' | 'directory' | 'other';
  readonly size: number;
  readonly modified: string;
  readonly created: string;
  /** Permission bits in octal, e.g. "644". */
  readonly mode: string;
  readonly link: boolean;
}

export default async function fileStats(args: Args, ctx?: ToolContext): Promise<FileStats> {
  const root = await filesRoot(ctx);
  const where = await resolveInRoot(root, args.path);
  if (!where.exists) throw toolError('NOT_FOUND', `"${where.relative}" does not exist under the files root`);
  // Through its checked folder: a folder swapped for a link meanwhile is refused (pinned.ts).
  const info = await statPinned(where);
  const asWritten = await fsCall(() => lstat(resolve(root, args.path)), where.relative);
  return {
    path: where.relative,
    type: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other',
    size: info.size,
    modified: info.mtime.toISOString(),
    created: info.birthtime.toISOString(),
    mode: (info.mode & 0o777).toString(8),
    link: asWritten.isSymbolicLink(),
  };
}
