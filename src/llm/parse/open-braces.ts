import { BACKSLASH, CLOSE, CLOSE_WIDE, CURLY_CLOSE, CURLY_OPEN, OPEN, OPEN_WIDE, QUOTE } from './match-bracket.js';

// Where the first object still open starts in a streamed text, kept up to date delta by delta,
// so that the stream never walks (or copies into one piece) the prose again each time it settles
// quiet text or ends. The same walk as matchBracket's: a brace inside a "string" (or a “curly” one) is
// text, a full-width ｛ ｝ counts as a brace.

const CURLY = 1;

export class OpenBraces {
  /** Where the object still open starts (an offset into the text fed since the last reset), or -1. */
  openAt = -1;
  private depth = 0;
  /** Inside a string: QUOTE for "…", CURLY for “…”, 0 outside. */
  private quote = 0;
  /** Backslashes just before, inside a "…" string: an odd count escapes the quote that follows. */
  private slashes = 0;

  reset(): void {
    this.openAt = -1;
    this.depth = 0;
    this.quote = 0;
    this.slashes = 0;
  }

  /** True inside an object: every character fed matters. Outside, text without a `{` or `｛` need not be fed. */
  get inside(): boolean {
    return this.depth > 0;
  }

  /** Appends `text`, which starts at `at` in the text fed since the last reset. */
  feed(text: string, at: number): void {
    // The state in locals while walking: fields written at every character cost as much again.
    let { depth, quote, slashes, openAt } = this;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (depth === 0) {
        if (c === OPEN || c === OPEN_WIDE) {
          openAt = at + i;
          depth = 1;
        }
      } else if (quote === QUOTE) {
        if (c === BACKSLASH) slashes++;
        else {
          if (c === QUOTE && slashes % 2 === 0) quote = 0;
          slashes = 0;
        }
      } else if (quote === CURLY) {
        if (c === CURLY_OPEN || c === CURLY_CLOSE) quote = 0;
      } else if (c === QUOTE) {
        quote = QUOTE;
        slashes = 0;
      } else if (c === CURLY_OPEN || c === CURLY_CLOSE) {
        quote = CURLY;
      } else if (c === OPEN || c === OPEN_WIDE) {
        depth++;
      } else if (c === CLOSE || c === CLOSE_WIDE) {
        if (--depth === 0) openAt = -1;
      }
    }
    this.depth = depth;
    this.quote = quote;
    this.slashes = slashes;
    this.openAt = openAt;
  }
}
