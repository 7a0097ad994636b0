import type { Claim, Span } from '../format.js';

// Searching for the tokens and tags that delimit calls. A format looks for a closing token once
// per opening one; in hostile text (20,000 opening tags and no closing one) a plain search from
// each opening tag would scan to the end every time, quadratic. A Seeker remembers its last
// answer: searches only go forward, so a token that is absent after one place is absent after any
// later place, and one that was found further on is still the next one.

export interface Hit {
  readonly at: number;
  /** Just past the match. */
  readonly end: number;
  readonly match: RegExpExecArray | undefined;
}

/**
 * How each token expression is searched, worked out once: building it per search of a text cost
 * a streamed message more than its reads' searches (each read of a short text builds its seekers
 * again). Sharing is safe, as every search sets `lastIndex` before it runs.
 *
 * An expression whose every match starts with the same literal text (`<(tool_call|tools?)>`
 * starts with `<`) is searched for that text with indexOf first, and tried only where it is:
 * a regular expression alone looks at each character of a long message in turn, where indexOf
 * runs natively (the llm-parse bench).
 */
interface Search {
  readonly lead: string;
  /** Sticky when there is a lead (tried at each place it is found), global when there is none. */
  readonly re: RegExp;
}

const searches = new WeakMap<RegExp, Search>();
/**
 * By source too, for the expressions a format builds per text (invoke's parameter tag, whose
 * prefix the text names): a few, kept while there are not many (hostile text may name any number).
 */
const bySource = new Map<string, Search>();

function searchOf(token: RegExp): Search {
  let search = searches.get(token);
  if (search !== undefined) return search;
  const flags = token.flags.replace(/[gy]/g, '');
  const key = `${flags}/${token.source}`;
  search = bySource.get(key);
  if (search === undefined) {
    const lead = flags.includes('i') ? '' : literalLead(token.source);
    search = { lead, re: new RegExp(token.source, `${flags}${lead === '' ? 'g' : 'y'}`) };
    if (bySource.size >= 64) bySource.clear();
    bySource.set(key, search);
  }
  searches.set(token, search);
  return search;
}

const SPECIAL = new Set(['^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

/** The literal text every match of the expression `source` starts with ('' when it may start otherwise). */
export function literalLead(source: string): string {
  // An alternative at the top level may start with anything.
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') {
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return '';
  }
  let lead = '';
  let i = 0;
  for (; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      // An escaped punctuation character is itself; a letter or digit after \ is a class or a code.
      const next = source[i + 1];
      if (next === undefined || /[\w]/.test(next)) break;
      lead += next;
      i++;
    } else if (SPECIAL.has(c)) break;
    else lead += c;
  }
  // A quantifier after the last literal applies to it alone: it may be absent.
  const after = source[i];
  return after === '?' || after === '*' || after === '{' ? lead.slice(0, -1) : lead;
}

/** The first match of `token` at or after `from` (null when there is none). */
export function findMatch(text: string, token: RegExp, from = 0): RegExpExecArray | null {
  const { lead, re } = searchOf(token);
  if (lead === '') {
    re.lastIndex = from;
    return re.exec(text);
  }
  for (let at = text.indexOf(lead, from); at >= 0; at = text.indexOf(lead, at + 1)) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (m !== null) return m;
  }
  return null;
}

/** Where the first match of `token` starts (-1 when there is none), as String.search but faster. */
export function searchText(text: string, token: RegExp, from = 0): number {
  return findMatch(text, token, from)?.index ?? -1;
}

export class Seeker {
  private from = -1;
  private found: Hit | undefined;

  constructor(
    private readonly text: string,
    private readonly token: string | RegExp,
  ) {
  }

  /** The first match at or after `from` and before `limit`. */
  find(from: number, limit = this.text.length): Hit | undefined {
    if (!(this.from >= 0 && from >= this.from && (this.found === undefined || this.found.at >= from))) {
      this.from = from;
      this.found = this.search(from);
    }
    return this.found !== undefined && this.found.at < limit ? this.found : undefined;
  }

  private search(from: number): Hit | undefined {
    const token = this.token;
    if (typeof token === 'string') {
      const at = this.text.indexOf(token, from);
      return at < 0 ? undefined : { at, end: at + token.length, match: undefined };
    }
    const m = findMatch(this.text, token, from);
    return m === null ? undefined : { at: m.index, end: m.index + m[0].length, match: m };
  }
}

/** The earliest of several seekers' matches. */
export function firstFound(seekers: readonly Seeker[], from: number, limit?: number): Hit | undefined {
  let best: Hit | undefined;
  for (const s of seekers) {
    const f = s.find(from, limit);
    if (f !== undefined && (best === undefined || f.at < best.at)) best = f;
  }
  return best;
}

/** Every `begin … end` block (to the end of the text when `end` never comes); `inside`: the text starts inside one. */
export function blockSpans(text: string, begin: string, end: string, inside = false): Claim[] {
  const spans: Claim[] = [];
  for (let at = inside ? 0 : text.indexOf(begin); at >= 0; at = text.indexOf(begin, at + 1)) {
    const close = text.indexOf(end, inside && at === 0 ? 0 : at + begin.length);
    spans.push(close < 0 ? { start: at, end: text.length } : { start: at, end: close + end.length, closed: true });
    if (close < 0) break;
    at = close;
  }
  return spans;
}

/**
 * `claims` with a `resume` on the last one when it is still open and calls or problems end inside
 * it: a stream reads on from past them (told the text starts inside the block) instead of reading
 * the whole block again.
 */
export function resumable(claims: Claim[], found: { readonly calls: readonly Span[]; readonly problems: readonly Span[] }): Claim[] {
  const last = claims[claims.length - 1];
  if (last === undefined || last.closed === true) return claims;
  let resume = last.start;
  for (const span of [...found.calls, ...found.problems]) if (span.start >= last.start && span.end > resume) resume = span.end;
  if (resume > last.start) claims[claims.length - 1] = { start: last.start, end: last.end, resume };
  return claims;
}
