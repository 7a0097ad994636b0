// Durations (SPEC §2.1): a number of seconds, or a string such as `250ms`, `2s`, `1.5m`, `1h`.
// Returns milliseconds, rounded to a whole number, or undefined when the value is not a valid
// duration: negative, not finite, an unknown unit, a unitless string, or longer than the
// largest delay Node's timers honour (2^31 - 1 ms, about 24.8 days; a longer setTimeout fires
// at once, which would turn a generous timeout into an immediate one).

const MAX_MS = 2 ** 31 - 1;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PATTERN = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)$/;

export function parseDuration(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === 'number') {
    ms = value * 1000;
  } else if (typeof value === 'string') {
    const m = PATTERN.exec(value.trim());
    if (!m) return undefined;
    ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  } else {
    return undefined;
  }
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  const rounded = Math.round(ms);
  return rounded <= MAX_MS ? rounded : undefined;
}
