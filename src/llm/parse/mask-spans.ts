import type { Span } from './format.js';

// Hiding text from the formats that have not read it yet: a stretch becomes spaces of the same
// length, so every offset still points where it pointed in the model's text (problems report
// positions in the original), and no format sees a call another one has already read.
//
// Reasoning is hidden before any format runs: `<think>…</think>` (DeepSeek-R1, Qwen3, GLM, Kimi,
// MiniMax; `<thinking>` too), Command R7B's `<|START_THINKING|>…<|END_THINKING|>`, and a
// `</think>` with no opening tag (templates that open the block in the prompt), which closes
// everything before it. Reasoning models draft calls there they may not mean to make.

export function maskSpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const { start, end } of sorted) {
    const s = Math.max(start, pos);
    if (end <= s) continue;
    out += text.slice(pos, s) + ' '.repeat(end - s);
    pos = end;
  }
  return out + text.slice(pos);
}

const OPENERS: readonly (readonly [RegExp, RegExp])[] = [
  [/<think(?:ing)?>/gi, /<\/think(?:ing)?>/gi],
  [/<\|START_THINKING\|>/g, /<\|END_THINKING\|>/g],
];

export interface Masked {
  readonly text: string;
  /** While streaming: where a reasoning block opens that has not closed yet. */
  readonly pending?: number;
}

export function maskReasoning(text: string, partial: boolean): Masked {
  // Plain searches decide for most messages; the case-insensitive expressions run only when a tag is there.
  const lt = text.indexOf('<');
  if (lt < 0) return { text };
  if (text.indexOf('hink', lt) < 0 && text.indexOf('HINK', lt) < 0) return { text };
  const spans: Span[] = [];
  let pending: number | undefined;
  for (const [open, close] of OPENERS) {
    open.lastIndex = 0;
    close.lastIndex = 0;
    const firstOpen = open.exec(text);
    const firstClose = close.exec(text);
    if (firstClose !== null && (firstOpen === null || firstClose.index < firstOpen.index)) {
      spans.push({ start: 0, end: firstClose.index + firstClose[0].length });
    }
    let m = firstOpen;
    while (m !== null) {
      close.lastIndex = m.index + m[0].length;
      const c = close.exec(text);
      if (c === null) {
        spans.push({ start: m.index, end: text.length });
        if (partial) pending = Math.min(pending ?? m.index, m.index);
        break;
      }
      spans.push({ start: m.index, end: c.index + c[0].length });
      open.lastIndex = c.index + c[0].length;
      m = open.exec(text);
    }
  }
  return pending === undefined ? { text: maskSpans(text, spans) } : { text: maskSpans(text, spans), pending };
}
