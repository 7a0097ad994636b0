import type { Span } from '../format.js';

// What the XML-style formats (Qwen3-Coder, GLM, MiniMax / Claude-style invoke, Anthropic's legacy
// function_calls) share: a value is the text between two tags, written on lines of its own by
// some models (so one newline on each side belongs to the layout, not the value), and a call is
// often wrapped in an outer tag whose span belongs to the call.

/** The value between tags, less the one newline the layout puts on each side. */
export function tagValue(text: string): string {
  let start = 0;
  let end = text.length;
  if (text.startsWith('\r\n')) start = 2;
  else if (text.startsWith('\n')) start = 1;
  if (end > start && text.endsWith('\r\n')) end -= 2;
  else if (end > start && text.endsWith('\n')) end -= 1;
  return text.slice(start, end);
}

/** An outer tag around a call: `open` must end where the call starts (spaces between), `close` start where it ends. */
export interface Wrapper {
  readonly open: RegExp;
  readonly close: RegExp;
}

/** Compiles a wrapper from the two tags' expressions. */
export function wrapper(open: string, close: string): Wrapper {
  return { open: new RegExp(`${open}\\s*$`), close: new RegExp(`^\\s*${close}`) };
}

/** `span` widened to the wrapper's tags when they sit right around it (looked for within 64 characters). */
export function widen(text: string, span: Span, wrap: Wrapper): Span {
  const o = wrap.open.exec(text.slice(Math.max(0, span.start - 64), span.start));
  const c = wrap.close.exec(text.slice(span.end, span.end + 64));
  return { start: o ? span.start - o[0].length : span.start, end: c ? span.end + c[0].length : span.end };
}
