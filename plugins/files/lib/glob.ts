import picomatch from 'picomatch';
import { toolError } from './tool-context.js';

// Globs for list_files, matched by picomatch: patterns are relative to the files root and use
// forward slashes.
//   *      any characters within one path segment
//   **     as a whole segment: any number of segments, none included (`**/*.md` matches `a.md`)
//   ?      one character other than /
//   [abc]  [a-z]  [!abc]   one character from (or, with !, not from) a set
//   {a,b}  either alternative (may nest, may hold wildcards)
// Dot files match only when the pattern segment starts with a dot, unless `dot` is set.
//
// picomatch turns a glob into a JavaScript regular expression, and those backtrack: each `*` in a
// segment multiplies the work on a name that almost matches (`*a*a*a*a*a*a*a*a*b` against a
// 60-character `aaa…` took 119 s). So patterns are held to limits that keep the worst case of
// one match in the tens of milliseconds: at most 1000 characters, at most 3 `*` in one segment
// (counted in the text, braces included, so alternatives cannot multiply them), at most 8 `**`
// segments, and no extglobs (`+(a|aa)` nests quantifiers, which backtracks exponentially). A
// leading `!` is an ordinary character, as it always was here.

export const MAX_PATTERN_CHARS = 1000;
export const MAX_STARS_PER_SEGMENT = 3;
export const MAX_GLOBSTARS = 8;

export interface GlobOptions {
  readonly dot?: boolean;
}

/** Throws BAD_PATTERN when a pattern is past the complexity limits above. */
export function checkComplexity(pattern: string): void {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw toolError('BAD_PATTERN', `a pattern has ${pattern.length} characters; at most ${MAX_PATTERN_CHARS} are accepted`);
  }
  let globstars = 0;
  for (const segment of pattern.split('/')) {
    if (segment === '**') {
      globstars += 1;
      continue;
    }
    const stars = segment.split('*').length - 1;
    if (stars > MAX_STARS_PER_SEGMENT) {
      throw toolError(
        'BAD_PATTERN',
        `pattern segment "${shorten(segment)}" has ${stars} '*'; at most ${MAX_STARS_PER_SEGMENT} per segment are accepted (more make matching take exponentially long)`,
      );
    }
  }
  if (globstars > MAX_GLOBSTARS) {
    throw toolError('BAD_PATTERN', `pattern "${shorten(pattern)}" has ${globstars} '**' segments; at most ${MAX_GLOBSTARS} are accepted`);
  }
}

/** A matcher for relative paths with forward slashes. Call checkComplexity first. */
export function compileGlob(pattern: string, options: GlobOptions = {}): (path: string) => boolean {
  try {
    return picomatch(pattern, { dot: options.dot ?? false, noextglob: true, nonegate: true, maxLength: MAX_PATTERN_CHARS });
  } catch (error) {
    throw toolError('BAD_PATTERN', `pattern "${shorten(pattern)}" is not a glob: ${(error as Error).message}`);
  }
}

/** The static folder a pattern starts with ('' when it starts with a wildcard): where a walk can begin. */
export function staticBase(pattern: string): string {
  const scan = picomatch.scan(pattern);
  if (scan.isGlob) return scan.base;
  // A plain path names a file: walk its folder.
  const slash = scan.base.lastIndexOf('/');
  return slash < 0 ? '' : scan.base.slice(0, slash);
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
