import { parseDuration } from '../expr/duration.js';

// Manifest durations mean what chain durations mean (a number is seconds, a string carries its
// unit), so they share the parser. A tool's timeout, ttl or reset time of zero means nothing
// useful, so only positive durations pass.

/** Milliseconds, or undefined when the value is not a positive duration. */
export function durationMs(value: unknown): number | undefined {
  const ms = parseDuration(value);
  return ms !== undefined && ms > 0 ? ms : undefined;
}
