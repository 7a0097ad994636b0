import type { Span } from '../format.js';

// Searching for the special tokens that delimit calls in Harmony, Kimi-K2, DeepSeek and the
// other token-delimited formats: plain indexOf, the cheapest search there is.

export interface TokenAt {
  readonly at: number;
  readonly token: string;
}

/** The earliest of `tokens` at or after `from`. */
export function nextOf(text: string, tokens: readonly string[], from: number): TokenAt | undefined {
  let best: TokenAt | undefined;
  for (const token of tokens) {
    const at = text.indexOf(token, from);
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, token };
  }
  return best;
}

/** Every `begin … end` block (to the end of the text when `end` never comes). */
export function blockSpans(text: string, begin: string, end: string): Span[] {
  const spans: Span[] = [];
  for (let at = text.indexOf(begin); at >= 0; at = text.indexOf(begin, at + 1)) {
    const close = text.indexOf(end, at + begin.length);
    spans.push({ start: at, end: close < 0 ? text.length : close + end.length });
    if (close < 0) break;
    at = close;
  }
  return spans;
}
