import type { Span } from './format.js';
import type { Resumable } from './read-formats.js';

// Where a streamed message's settled point may move after a read: to the earliest unfinished
// construct, never into the middle of something read, never past the tail (where a marker may
// still be being typed). Split from tool-call-stream.ts, which keeps the state between deltas.

export interface Settled {
  /** The new settled point in the unsettled text (0: it stays). */
  readonly at: number;
  /** The format whose open block the text now starts inside (it settled at the block's `resume`). */
  readonly inside: string | undefined;
}

/**
 * `spans` is everything the formats read or claimed, `done` what is finished among them (calls,
 * problems, closed claims), `resumes` the open claims that name a place to read on from.
 */
export function settlePoint(length: number, pending: number | undefined, spans: readonly Span[], done: readonly Span[], tail: number, resumes: readonly Resumable[] = []): Settled {
  const limit = pending ?? length;
  let next = Math.max(0, Math.min(limit, length - tail));
  // Past something finished (it is never read again, and a marker still being typed starts
  // after it), a block that closes in a short text included (the block the text started inside),
  // then back before anything that still holds the settled point (a block a format claims may
  // hold more calls to come), or to the place inside it the format reads on from.
  for (let moved = true; moved; ) {
    moved = false;
    for (const span of done) {
      if ((span.start < next || span.start === 0) && next < span.end && span.end <= limit) {
        next = span.end;
        moved = true;
      }
    }
  }
  // An unfinished span that reaches the end of the text may still grow: the end is inside it too
  // (settling there would leave a block still open behind, its end token read as no one's).
  const holds = (span: Span, at: number): boolean => span.start < at && (at < span.end || span.end === length);
  // Finished spans are few (a read's calls): looked through, rather than keyed by strings in a set
  // (building one cost a stream's read of a call more than the rest of settling).
  const finished = (span: Span): boolean => done.some((d) => d.start === span.start && d.end === span.end);
  for (let moved = true; moved; ) {
    moved = false;
    for (const span of spans) {
      if (!holds(span, next) || finished(span)) continue;
      // Past the block's finished calls, as past a finished span, even into the tail: no marker spans their end.
      const resume = resumes.find((r) => r.start === span.start && r.end === span.end && r.at <= limit && !spans.some((s) => s !== span && s.start < r.at && r.at < s.end));
      const to = resume?.at ?? span.start;
      if (to !== next) {
        next = to;
        moved = true;
      }
    }
  }
  next = Math.max(0, next);
  return { at: next, inside: resumes.find((r) => r.at === next && holds(r, next))?.format };
}
