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

/** Nothing but spaces and the start of a tag (`</tool_c`) after `end`: a closing tag may still come there. */
const TAG_ARRIVING = /^\s*(?:<[^<>]*)?$/;

/**
 * While streaming: after `end` comes nothing but spaces, or a tag still arriving, up to the end
 * of the text, so a call's closing tag may yet follow. Such a call is reported with `pending` at
 * its start (format.ts): the stream reads it again and takes the span that ends after the tag.
 */
export function tagMayFollow(text: string, end: number): boolean {
  return text.length - end <= 64 && TAG_ARRIVING.test(text.slice(end));
}

/**
 * While streaming: the wrapper's closing tag has not come after the call at `span` (not widened),
 * but may still. Asked whether or not the wrapper opened right before the call: the last of several
 * calls in one wrapper ends at the wrapper's closing tag too.
 */
export function waitsForClose(text: string, span: Span, wrap: Wrapper): boolean {
  return tagMayFollow(text, span.end) && !wrap.close.test(text.slice(span.end, span.end + 64));
}
