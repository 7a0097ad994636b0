import { DURATION_PATTERN, DURATION_RULE, MAX_DURATION_MS, MAX_DURATION_SECONDS } from './duration-grammar.generated.js';

// Durations: a number of seconds, or a string such as `250ms`, `2s`, `1.5m`, `1h`.
// The grammar is generated (scripts/gen-grammars.js) into both JSON Schemas and the file
// imported above, so that what an editor accepts and what the engine accepts are the same set:
// greater than zero, at most 24 days (under the 2^31 - 1 ms Node's timers can wait; a longer
// setTimeout fires at once), no spaces. Anything else is undefined, which callers report as
// BAD_DURATION: a value is never silently read as "no timeout".

const PATTERN = new RegExp(DURATION_PATTERN, 'u');
const PARTS = /^([0-9.]+)(ms|s|m|h)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export { DURATION_RULE, MAX_DURATION_MS };

/** Milliseconds (a whole number, at least 1), or undefined when the value is not a duration. */
export function parseDuration(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === 'number') {
    // The same comparisons as the schema's exclusiveMinimum and maximum; NaN fails both.
    if (!(value > 0 && value <= MAX_DURATION_SECONDS)) return undefined;
    ms = value * 1000;
  } else if (typeof value === 'string' && PATTERN.test(value)) {
    const [, amount, unit] = PARTS.exec(value) as RegExpExecArray;
    ms = Number(amount) * (UNIT_MS[unit as string] as number);
  } else {
    return undefined;
  }
  // A positive amount below half a millisecond still means "wait", not "no wait".
  return Math.min(MAX_DURATION_MS, Math.max(1, Math.round(ms)));
}

// Waits (sleeps, and the timeouts of waits for events and people) are not timers: a run waiting
// is parked in the run store, so they may be any length — days, weeks, years — and take the
// units `d` (24 h) and `w` (7 d) too. At most ten years, so that a typo cannot park a run forever.

const WAIT_PARTS = /^((?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))(ms|s|m|h|d|w)$/;
const WAIT_UNIT_MS: Readonly<Record<string, number>> = { ...UNIT_MS, d: 86_400_000, w: 604_800_000 };
const MAX_WAIT_MS = 3650 * 86_400_000;

export const WAIT_DURATION_RULE = 'a number of seconds, or a number with a unit (500ms, 30s, 10m, 2h, 3d, 2w) without spaces; greater than zero and at most 10 years';

/** Milliseconds (a whole number, at least 1), or undefined when the value is not a wait's duration. */
export function parseWaitDuration(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === 'number') ms = value * 1000;
  else if (typeof value === 'string') {
    const parts = WAIT_PARTS.exec(value);
    if (parts === null) return undefined;
    ms = Number(parts[1]) * (WAIT_UNIT_MS[parts[2]!] as number);
  } else return undefined;
  if (!(ms > 0 && ms <= MAX_WAIT_MS)) return undefined;
  return Math.max(1, Math.round(ms));
}
