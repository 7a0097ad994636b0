import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchBracket } from '../../src/llm/parse/match-bracket.js';
import { OpenBraces } from '../../src/llm/parse/open-braces.js';

// The stream keeps where the first object still open starts as deltas arrive, instead of walking
// the whole unsettled text with matchBracket whenever it settles quiet prose or ends. Whatever the
// text and however it is cut, the answer must be the walk's.

/** The walk the stream used to make: the first `{` or `｛` whose matchBracket finds no end. */
function walked(text: string): number {
  for (let at = 0; at < text.length; at++) {
    const c = text[at];
    if (c !== '{' && c !== '\uff5b') continue;
    const close = matchBracket(text, at);
    if (close < 0) return at;
    at = close;
  }
  return -1;
}

function fed(pieces: readonly string[]): number {
  const braces = new OpenBraces();
  let at = 0;
  for (const piece of pieces) {
    if (braces.inside || /[{\uff5b]/.test(piece)) braces.feed(piece, at);
    at += piece.length;
  }
  return braces.openAt;
}

describe('OpenBraces: the first object still open, delta by delta', () => {
  it('skips braces in strings, escaped quotes and curly quotes, and counts full-width braces', () => {
    const cases: [string, number][] = [
      ['prose {placeholders} and {"name": "Alice", "age": 31}.', -1],
      ['a {"q": "SELECT \'}\'"', 2],
      ['a {"say": "\\"}\\""} b {', 21],
      ['{"a": "\\\\"} {"b": 1', 12],
      ['“}” {“x}”: 1} {', 14],
      ['｛"city": "北京"｝ then ｛"a": {', 20],
      ['x {"a": "b', 2],
    ];
    for (const [text, open] of cases) {
      expect(walked(text), text).toBe(open);
      expect(fed([text]), text).toBe(open);
      expect(fed([...text]), `${text}, a character at a time`).toBe(open);
    }
  });

  it('agrees with the walk on any text cut anywhere (property)', () => {
    const alphabet = fc.constantFrom('{', '}', '"', '\\', '\u201c', '\u201d', '\uff5b', '\uff5d', 'a', ' ', ':');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }), fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 10 }), (chars, sizes) => {
        const text = chars.join('');
        const pieces: string[] = [];
        for (let i = 0, k = 0; i < text.length; k++) {
          const size = sizes[k % sizes.length]!;
          pieces.push(text.slice(i, i + size));
          i += size;
        }
        expect(fed(pieces)).toBe(walked(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('starts again from nothing after a reset', () => {
    const braces = new OpenBraces();
    braces.feed('{"open": ', 0);
    expect(braces.inside).toBe(true);
    expect(braces.openAt).toBe(0);
    braces.reset();
    expect(braces.inside).toBe(false);
    braces.feed('closed {} and ', 0);
    braces.feed(' {', 18);
    expect(braces.openAt).toBe(19);
  });
});
