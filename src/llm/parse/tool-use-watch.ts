import type { RecentDeltas } from './recent-deltas.js';

// Whether a streamed message's unsettled text holds `tool_use` (`{"type": "tool_use", "name": …}`
// is a call without an arguments key), kept up to date delta by delta. The word is looked for in
// the last deltas, around each underscore as it arrives: a whole word searched through a CJK text
// is slow, and searching text never read would first copy all of it into one piece.

export class ToolUseWatch {
  /** The unsettled text holds a `tool_use`. */
  found = false;
  /** A `_` among the last characters (an offset into the unsettled text) that may yet be a `tool_use`'s, or -1. */
  private underscoreAt = -1;

  /** True when `look` must see the next delta: it holds a `_`, or one came just before. */
  watching(hasUnderscore: boolean): boolean {
    return hasUnderscore || this.underscoreAt >= 0;
  }

  /** The newest delta, which ends the unsettled text at `length`. */
  look(delta: string, length: number, recent: RecentDeltas): void {
    if (this.underscoreAt < 0) this.underscoreAt = length - delta.length + delta.indexOf('_');
    const reach = length - this.underscoreAt + 4;
    const near = recent.text(reach);
    if (near.includes('tool_use', Math.max(0, near.length - reach))) {
      this.found = true;
      this.underscoreAt = -1;
      return;
    }
    // A `tool_use` still to come ends in new text: its `_` is among the last three characters or later.
    const last = near.indexOf('_', near.length - 3);
    this.underscoreAt = last < 0 ? -1 : length - near.length + last;
  }

  /** Starts again on a new unsettled text (`hasUnderscore`: it holds a `_`). */
  reset(text: string, hasUnderscore: boolean): void {
    this.found = hasUnderscore && text.includes('tool_use');
    this.underscoreAt = hasUnderscore ? text.indexOf('_', text.length - 3) : -1;
  }
}
