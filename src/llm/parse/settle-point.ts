import type { Span } from './format.js';

// Where a streamed message's settled point may move after a read: to the earliest unfinished
// construct, never into the middle of something read, never past the tail (where a marker may
// still be being typed). Split from tool-call-stream.ts, which keeps the state between deltas.

/**
 * The new settled point in the unsettled text (0: it stays). `spans` is everything the formats
 * read or claimed, `done` what is finished among them (calls, problems, closed claims).
 */
export function settlePoint(length: number, pending: number | undefined, spans: readonly Span[], done: readonly Span[], tail: number): number {
  const limit = pending ?? length;
  let next = Math.min(limit, length - tail);
  // Past something finished (it is never read again, and a marker still being typed starts
  // after it), then back before anything that still holds the settled point (a block a format
  // claims may hold more calls to come).
  for (let moved = true; moved; ) {
    moved = false;
    for (const span of done) {
      if (span.start < next && next < span.end && span.end <= limit) {
        next = span.end;
        moved = true;
      }
    }
  }
  // Built only when a span holds the point, which most reads never come to: building it on every read cost more than the rest of settling.
  let finished: Set<string> | undefined;
  for (let moved = true; moved; ) {
    moved = false;
    for (const span of spans) {
      if (!(span.start < next && next < span.end)) continue;
      finished ??= new Set(done.map((d) => `${d.start}:${d.end}`));
      if (!finished.has(`${span.start}:${span.end}`)) {
        next = span.start;
        moved = true;
      }
    }
  }
  return Math.max(0, next);
}
