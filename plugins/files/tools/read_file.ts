import { readTextUnder } from '../lib/read-text.js';
import { filesRoot } from '../lib/root.js';
import type { ToolContext } from '../lib/tool-context.js';

// read_file: a UTF-8 text file under the files root.

interface Args {
  readonly path: string;
  readonly max_bytes?: number;
}

export default async function readFile(args: Args, ctx?: ToolContext): Promise<{ path: string; text: string; bytes: number }> {
  const file = await readTextUnder(await filesRoot(ctx), args.path, args.max_bytes ?? 1024 * 1024, ctx?.signal);
  return { path: file.where.relative, text: file.text, bytes: file.bytes };
}
