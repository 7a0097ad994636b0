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
 * The global copy of each token expression a Seeker searches with, made once: building one per
 * search of a text cost a streamed message more than its reads' searches (each read of a short
 * text builds its seekers again). Sharing is safe, as every search sets `lastIndex` before it runs.
 */
const globals = new WeakMap<RegExp, RegExp>();

function globalCopy(token: RegExp): RegExp {
  let re = globals.get(token);
  if (re === undefined) {
    re = new RegExp(token.source, token.flags.includes('g') ? token.flags : `${token.flags}g`);
    globals.set(token, re);
  }
  return re;
}

export class Seeker {
  private from = -1;
  private found: Hit | undefined;
  private readonly re: RegExp | undefined;

  constructor(
    private readonly text: string,
    private readonly token: string | RegExp,
  ) {
    this.re = typeof token === 'string' ? undefined : globalCopy(token);
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
    if (this.re === undefined) {
      const token = this.token as string;
      const at = this.text.indexOf(token, from);
      return at < 0 ? undefined : { at, end: at + token.length, match: undefined };
    }
    this.re.lastIndex = from;
    const m = this.re.exec(this.text);
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
