import { isRecord } from '../common/json.js';
import { printable } from '../common/printable.js';

// Partial matching for chain tests: an expected object lists only the keys that
// matter; arrays and scalars must be equal (arrays element by element, with the same rule for
// objects inside them). Each difference is one line naming where it is.

export interface Mismatch {
  /** `outputs.text`, `steps.clock.attempts`. */
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

export function partialMatch(expected: unknown, actual: unknown, path: string, out: Mismatch[] = []): Mismatch[] {
  if (isRecord(expected)) {
    if (!isRecord(actual)) {
      out.push({ path, expected, actual });
      return out;
    }
    for (const key of Object.keys(expected)) partialMatch(expected[key], actual[key], `${path}.${key}`, out);
    return out;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) out.push({ path, expected, actual });
    else expected.forEach((e, i) => partialMatch(e, actual[i], `${path}[${i}]`, out));
    return out;
  }
  if (!Object.is(expected, actual) && !(expected === null && actual === undefined)) out.push({ path, expected, actual });
  return out;
}


/** `- expected` / `+ actual` lines, as a test runner prints them. */
export function diffLines(m: Mismatch): string[] {
  return [`${m.path}:`, `  - expected ${show(m.expected)}`, `  + actual   ${show(m.actual)}`];
}

function show(value: unknown): string {
  if (value === undefined) return '(nothing)';
  const text = JSON.stringify(value);
  return printable(text.length > 300 ? `${text.slice(0, 297)}...` : text);
}
