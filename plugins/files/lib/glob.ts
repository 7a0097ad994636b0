// A small glob matcher for list_files (Node 20 has no fs.glob): patterns are relative to the
// files root and use forward slashes.
//   *      any characters within one path segment
//   **     as a whole segment: any number of segments, none included (`**/*.md` matches `a.md`)
//   ?      one character other than /
//   [abc]  [a-z]  [!abc]   one character from (or, with !, not from) a set
//   {a,b}  either alternative (may nest, may hold wildcards)
// Everything else is literal. Dot files match only when the pattern segment starts with a dot,
// unless `dot` is set.

export interface GlobOptions {
  readonly dot?: boolean;
}

const MAX_ALTERNATIVES = 256;

export function globToRegExp(pattern: string, options: GlobOptions = {}): RegExp {
  const sources = expandBraces(pattern).map((p) => segmentsSource(p, options.dot ?? false));
  return new RegExp(`^(?:${sources.join('|')})$`, 'u');
}

/** The static directory a pattern starts with ('' when it starts with a wildcard): where a walk can begin. */
export function staticBase(pattern: string): string {
  const segments = pattern.split('/');
  const fixed: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (/[*?[\]{}]/.test(s)) break;
    fixed.push(s);
  }
  return fixed.join('/');
}

function segmentsSource(pattern: string, dot: boolean): string {
  const segments = pattern.split('/').filter((s, i, all) => s !== '' || i === all.length - 1);
  let out = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') {
      // Zero or more whole segments, each followed by a slash (or the end, for a trailing **).
      const one = dot ? '[^/]+' : '(?!\\.)[^/]+';
      out += last ? `(?:${one}(?:/${one})*)?` : `(?:${one}/)*`;
      return;
    }
    out += segmentSource(segment, dot) + (last ? '' : '/');
  });
  return out;
}

function segmentSource(segment: string, dot: boolean): string {
  let out = !dot && !segment.startsWith('.') ? '(?!\\.)' : '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] as string;
    if (ch === '*') {
      while (segment[i + 1] === '*') i += 1;
      out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close < 0) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^/' : ''}${body.replace(/[\\\]^[]/g, (c) => (c === '-' ? c : `\\${c}`))}]`;
      i = close;
    } else out += escapeRegExp(ch);
  }
  return out;
}

/** `a{b,c{d,e}}f` → [abf, acdf, acef]; a brace without a matching close is literal. */
export function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open < 0) return [pattern];
  let depth = 0;
  const commas: number[] = [];
  let close = -1;
  for (let i = open; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '{') depth += 1;
    else if (ch === '}') {
      depth -= 1;
      if (depth === 0) {
        close = i;
        break;
      }
    } else if (ch === ',' && depth === 1) commas.push(i);
  }
  if (close < 0 || commas.length === 0) {
    // Literal braces: keep them and expand whatever follows.
    const end = close < 0 ? open + 1 : close + 1;
    return expandBraces(pattern.slice(end)).map((rest) => pattern.slice(0, end) + rest);
  }
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const bounds = [open, ...commas, close];
  const out: string[] = [];
  for (let k = 0; k < bounds.length - 1; k++) {
    const alternative = pattern.slice((bounds[k] as number) + 1, bounds[k + 1]);
    for (const expanded of expandBraces(head + alternative + tail)) {
      out.push(expanded);
      if (out.length > MAX_ALTERNATIVES) throw Object.assign(new Error(`"${pattern}" expands to more than ${MAX_ALTERNATIVES} patterns`), { code: 'BAD_PATTERN' });
    }
  }
  return out;
}

function escapeRegExp(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}
