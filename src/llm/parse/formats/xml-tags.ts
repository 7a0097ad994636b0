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

/** `span` widened to an opening `wrapper` just before it and its closing tag just after it (spaces between allowed). */
export function widen(text: string, span: Span, open: RegExp, close: RegExp): Span {
  const before = text.slice(Math.max(0, span.start - 64), span.start);
  const o = new RegExp(`${open.source}\\s*$`, open.flags.replace('g', '')).exec(before);
  const after = text.slice(span.end, span.end + 64);
  const c = new RegExp(`^\\s*${close.source}`, close.flags.replace('g', '')).exec(after);
  return { start: o ? span.start - o[0].length : span.start, end: c ? span.end + c[0].length : span.end };
}

/** The first match of `re` (a global regex) at or after `from` and before `limit`. */
export function findTag(re: RegExp, text: string, from: number, limit = text.length): RegExpExecArray | undefined {
  re.lastIndex = from;
  const m = re.exec(text);
  return m === null || m.index >= limit ? undefined : m;
}
