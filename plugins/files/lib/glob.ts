import { RE2JS } from 're2js';
import { toolError } from './tool-context.js';

// Globs for list_files: patterns are relative to the files root and use forward slashes.
//   *      any characters within one path segment
//   **     as a whole segment: any number of segments, none included (`**/*.md` matches `a.md`)
//   ?      one character other than /
//   [abc]  [a-z]  [!abc]  [^abc]   one character from (or, with ! or ^, not from) a set
//   {a,b}  either alternative (may nest, may hold wildcards and slashes)
//   \x     the character x itself
// Dot files match only when the pattern segment starts with a dot, unless `dot` is set. A leading
// `!` is an ordinary character; there are no extglobs.
//
// Matching takes time linear in the path for a given pattern, whatever the pattern: a glob that
// a backtracking regular expression would run for minutes on (`**/*a*a*a/**/*a*a*a/…/b` against
// a deep path) is matched here segment by segment. Braces are expanded first (at most
// MAX_ALTERNATIVES patterns); each segment is compiled for re2js, a linear-time engine; `**`
// segments are matched by dynamic programming over (pattern segment, path segment) pairs, each
// pair tried once. The limits below stay as they were documented.

export const MAX_PATTERN_CHARS = 1000;
export const MAX_STARS_PER_SEGMENT = 3;
export const MAX_GLOBSTARS = 8;
export const MAX_ALTERNATIVES = 256;

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
      throw toolError('BAD_PATTERN', `pattern segment "${shorten(segment)}" has ${stars} '*'; at most ${MAX_STARS_PER_SEGMENT} per segment are accepted`);
    }
  }
  if (globstars > MAX_GLOBSTARS) {
    throw toolError('BAD_PATTERN', `pattern "${shorten(pattern)}" has ${globstars} '**' segments; at most ${MAX_GLOBSTARS} are accepted`);
  }
}

type Segment = { readonly kind: 'globstar' } | { readonly kind: 'segment'; readonly re: RE2JS; readonly dotted: boolean };

/** A matcher for relative paths with forward slashes. Call checkComplexity first. */
export function compileGlob(pattern: string, options: GlobOptions = {}): (path: string) => boolean {
  const dot = options.dot ?? false;
  let alternatives: Segment[][];
  try {
    alternatives = expandBraces(pattern).map((p) => p.split('/').map(compileSegment));
  } catch (error) {
    if (error instanceof Error && 'code' in error) throw error;
    throw toolError('BAD_PATTERN', `pattern "${shorten(pattern)}" is not a glob: ${(error as Error).message}`);
  }
  return (path) => {
    const parts = path.split('/');
    return alternatives.some((segments) => matchSegments(segments, parts, dot));
  };
}

/** Whether `parts` (a path's segments) match `segments`; each (i, j) pair is decided once. */
function matchSegments(segments: readonly Segment[], parts: readonly string[], dot: boolean): boolean {
  const n = parts.length;
  // memo[i * (n + 1) + j]: 0 unknown, 1 matches, 2 does not (segments from i against parts from j).
  const memo = new Uint8Array((segments.length + 1) * (n + 1));
  // Filled from the end, so every lookup below is already decided: no recursion, no re-tries.
  for (let i = segments.length; i >= 0; i -= 1) {
    for (let j = n; j >= 0; j -= 1) {
      let ok: boolean;
      if (i === segments.length) ok = j === n;
      else {
        const seg = segments[i]!;
        if (seg.kind === 'globstar') {
          // None: the next pattern segment here; one more: this part (not hidden), then still in `**`.
          ok = memo[(i + 1) * (n + 1) + j] === 1 || (j < n && (dot || !parts[j]!.startsWith('.')) && parts[j] !== '' && memo[i * (n + 1) + j + 1] === 1);
        } else {
          ok = j < n && memo[(i + 1) * (n + 1) + j + 1] === 1 && segmentMatches(seg, parts[j]!, dot);
        }
      }
      memo[i * (n + 1) + j] = ok ? 1 : 2;
    }
  }
  return memo[0] === 1;
}

function segmentMatches(seg: Extract<Segment, { kind: 'segment' }>, part: string, dot: boolean): boolean {
  if (!dot && part.startsWith('.') && !seg.dotted) return false;
  return seg.re.matches(part);
}

function compileSegment(text: string): Segment {
  if (text === '**') return { kind: 'globstar' };
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      i += 1;
      out += literal(text[i]!);
    } else if (c === '*') {
      while (text[i + 1] === '*') i += 1; // `a**b` is `a*b`
      out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = classEnd(text, i);
      if (end < 0) out += literal(c);
      else {
        let body = text.slice(i + 1, end);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        out += `[${negated ? '^/' : ''}${classBody(body)}]`;
        i = end;
      }
    } else out += literal(c);
  }
  // A segment that starts with a literal dot (or `\.`) may match a hidden name.
  return { kind: 'segment', re: RE2JS.compile(out), dotted: text.startsWith('.') || text.startsWith('\\.') };
}

/** Where the `]` closing the class opened at `start` is, or -1 (then `[` is a literal). */
function classEnd(text: string, start: number): number {
  let i = start + 1;
  if (text[i] === '!' || text[i] === '^') i += 1;
  if (text[i] === ']') i += 1; // a leading `]` is a member
  for (; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === ']') return i;
  }
  return -1;
}

function classBody(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      i += 1;
      out += literal(body[i]!);
    } else if (c === '-' && out !== '' && i + 1 < body.length) out += '-';
    else out += literal(c);
  }
  return out;
}

function literal(c: string): string {
  return `\\x{${c.codePointAt(0)!.toString(16)}}`;
}

/** Every pattern `{…,…}` stands for (nested braces included); a brace without a comma is literal. */
function expandBraces(pattern: string): string[] {
  const open = findOpenBrace(pattern);
  if (!open) return [pattern];
  const { start, end, options } = open;
  const head = pattern.slice(0, start);
  const tails = expandBraces(pattern.slice(end + 1));
  const out: string[] = [];
  for (const option of options) {
    for (const inner of expandBraces(option)) {
      for (const tail of tails) {
        out.push(head + inner + tail);
        if (out.length > MAX_ALTERNATIVES) throw toolError('BAD_PATTERN', `pattern "${shorten(pattern)}" stands for more than ${MAX_ALTERNATIVES} alternatives`);
      }
    }
  }
  return out;
}

/** The first `{…}` holding a top-level comma, with its alternatives. */
function findOpenBrace(pattern: string): { start: number; end: number; options: string[] } | undefined {
  for (let start = 0; start < pattern.length; start += 1) {
    if (pattern[start] === '\\') {
      start += 1;
      continue;
    }
    if (pattern[start] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let i = start; i < pattern.length; i += 1) {
      const c = pattern[i];
      if (c === '\\') i += 1;
      else if (c === '{') depth += 1;
      else if (c === ',' && depth === 1) commas.push(i);
      else if (c === '}' && (depth -= 1) === 0) {
        if (commas.length === 0) break; // `{a}`: literal braces
        const bounds = [start, ...commas, i];
        return { start, end: i, options: bounds.slice(0, -1).map((b, k) => pattern.slice(b + 1, bounds[k + 1])) };
      }
    }
  }
  return undefined;
}

/** The static folder a pattern starts with ('' when it starts with a wildcard): where a walk can begin. */
export function staticBase(pattern: string): string {
  const segments = pattern.split('/');
  const base: string[] = [];
  for (const segment of segments) {
    if (/[*?[\]{}\\]/.test(segment)) return base.join('/');
    base.push(segment);
  }
  // A plain path names a file: walk its folder.
  return base.slice(0, -1).join('/');
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
