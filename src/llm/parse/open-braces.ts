import { BACKSLASH, CLOSE, CLOSE_WIDE, CURLY_CLOSE, CURLY_OPEN, OPEN, OPEN_WIDE, QUOTE } from './match-bracket.js';

// Where the first object still open starts in a streamed text, kept up to date delta by delta,
// so that the stream never walks (or copies into one piece) the prose again each time it settles
// quiet text or ends. The same walk as matchBracket's: a brace inside a "string" (or a “curly” one) is
// text, a full-width ｛ ｝ counts as a brace.

// Each character's part in the walk, looked up in a table: most characters have none, and one
// lookup decides that, where comparing with each of the eight characters cost a third more
// (bench/llm-parse.ts, 4 KB of prose in 8-character deltas).
const PLAIN = 0;
const OPENS = 1;
const CLOSES = 2;
/** `"`; also what `quote` holds inside a "…" string. */
const STRAIGHT = 3;
/** `“` or `”`; also what `quote` holds inside a “…” string. */
const CURLY = 4;
const ESCAPE = 5;
const ROLE = new Uint8Array(0x10000);
ROLE[OPEN] = OPENS;
ROLE[OPEN_WIDE] = OPENS;
ROLE[CLOSE] = CLOSES;
ROLE[CLOSE_WIDE] = CLOSES;
ROLE[QUOTE] = STRAIGHT;
ROLE[CURLY_OPEN] = CURLY;
ROLE[CURLY_CLOSE] = CURLY;
ROLE[BACKSLASH] = ESCAPE;

export class OpenBraces {
  /** Where the object still open starts (an offset into the text fed since the last reset), or -1. */
  openAt = -1;
  private depth = 0;
  /** Inside a string: STRAIGHT for "…", CURLY for “…”, PLAIN outside. */
  private quote = PLAIN;
  /** Backslashes just before, inside a "…" string: an odd count escapes the quote that follows. */
  private slashes = 0;

  reset(): void {
    this.openAt = -1;
    this.depth = 0;
    this.quote = PLAIN;
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
      const role = ROLE[text.charCodeAt(i)]!;
      if (role === PLAIN) slashes = 0;
      else if (depth === 0) {
        if (role === OPENS) {
          openAt = at + i;
          depth = 1;
        }
      } else if (quote === STRAIGHT) {
        if (role === ESCAPE) slashes++;
        else {
          if (role === STRAIGHT && slashes % 2 === 0) quote = PLAIN;
          slashes = 0;
        }
      } else if (quote === CURLY) {
        if (role === CURLY) quote = PLAIN;
      } else if (role === STRAIGHT || role === CURLY) {
        quote = role;
        slashes = 0;
      } else if (role === OPENS) {
        depth++;
      } else if (role === CLOSES && --depth === 0) {
        openAt = -1;
      }
    }
    this.depth = depth;
    this.quote = quote;
    this.slashes = slashes;
    this.openAt = openAt;
  }
}
