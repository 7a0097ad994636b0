import { readTextUnder } from '../../files/lib/read-text.js';
import { filesRoot } from '../../files/lib/root.js';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// word_stats: counts of words, lines and characters, and the most frequent words, of a text
// given inline (`text`) or read from a file under the files root (`path`, resolved by the files
// plugin's rules: relative to TOOLCHAIN_FILES_ROOT, escapes refused with PATH_ESCAPE). A file
// that is not UTF-8 text (NOT_TEXT), too large (FILE_TOO_LARGE) or unreadable fails the call, so
// a for_each over many files can carry on past it with `on_error: continue`.

interface Args {
  readonly text?: string;
  readonly path?: string;
  readonly top?: number;
  readonly skip_common_words?: boolean;
  readonly max_bytes?: number;
}

export interface WordStats {
  /** The file's path relative to the root, when `path` was given. */
  readonly path?: string;
  readonly words: number;
  readonly unique_words: number;
  readonly lines: number;
  /** Unicode code points. */
  readonly characters: number;
  readonly bytes: number;
  readonly top_words: readonly { readonly word: string; readonly count: number }[];
}

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const COMMON = new Set(
  ('a an and are as at be been but by can did do does for from had has have he her his i if in into is it its me my no ' +
    'not of on or our she so than that the their them then there these they this to up us was we were what when which who ' +
    'will with would you your').split(' '),
);

export default async function wordStats(args: Args, ctx?: ToolContext): Promise<WordStats> {
  const { top = 10, skip_common_words = true, max_bytes = DEFAULT_MAX_BYTES } = args;
  if ((args.text === undefined) === (args.path === undefined)) {
    throw toolError('BAD_ARGUMENT', 'give exactly one of `text` (the text itself) or `path` (a file under the files root)');
  }
  if (args.path === undefined) return count(String(args.text), top, skip_common_words);
  const file = await readText(args.path, max_bytes, ctx);
  return { path: file.path, ...count(file.text, top, skip_common_words) };
}

function count(text: string, top: number, skipCommon: boolean): Omit<WordStats, 'path'> {
  const counts = new Map<string, number>();
  let words = 0;
  for (const m of text.matchAll(WORD)) {
    words += 1;
    const word = m[0].toLowerCase().replace(/’/g, "'");
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const ranked = [...counts]
    .filter(([word]) => !(skipCommon && COMMON.has(word)))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, Math.max(0, Math.floor(top)))
    .map(([word, n]) => ({ word, count: n }));
  let characters = 0;
  for (const _ of text) characters += 1;
  // A final line without a newline counts; a trailing newline does not start another line.
  const lines = text === '' ? 0 : text.split(/\r\n|\r|\n/).length - (/(\r\n|\r|\n)$/.test(text) ? 1 : 0);
  return { words, unique_words: counts.size, lines, characters, bytes: Buffer.byteLength(text), top_words: ranked };
}

async function readText(path: string, maxBytes: number, ctx?: ToolContext): Promise<{ path: string; text: string }> {
  const file = await readTextUnder(await filesRoot(ctx), path, maxBytes, ctx?.signal);
  return { path: file.where.relative, text: file.text };
}
