import type { ErrorObject } from 'ajv';
import { pointerTokens } from '../common/json-pointer.js';
import { isRecord } from '../common/json.js';

// The compiler goes on after a failed schema check, so that one `validate` reports every problem
// in a file. What it then compiles must not hold values of the wrong type: `depends_on: a` made
// `(s.depends_on ?? []).forEach` throw, and one such file broke every chain of the folder. So
// every member the schema found a problem in is left out of the value that gets compiled (the
// schema check has already reported it, at its place in the file):
//   - a step's key (`/steps/0/depends_on/1` drops that step's `depends_on`; the same in
//     `on_failure` and `finally`);
//   - one input or output (`/inputs/hour-12`);
//   - any other top-level key.
// A step that is itself malformed stays: compileDocument skips steps without a name and a kind.

/** A copy of `value` without the members `errors` point into; `value` itself when none. */
export function dropIllTyped(value: unknown, errors: readonly ErrorObject[]): unknown {
  if (!isRecord(value) || errors.length === 0) return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const e of errors) {
    const tokens = pointerTokens(e.instancePath);
    const extra = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty?: string }).additionalProperty : e.propertyName;
    if (extra !== undefined) tokens.push(extra);
    drop(copy, tokens);
  }
  return copy;
}

function drop(chain: Record<string, unknown>, tokens: readonly string[]): void {
  const [top, second, third] = tokens;
  if (top === undefined) return;
  if (top === 'steps' || top === 'on_failure' || top === 'finally') {
    const steps = chain[top];
    if (third === undefined || !Array.isArray(steps)) return;
    const step: unknown = steps[Number(second)];
    if (isRecord(step)) delete step[third];
    return;
  }
  if (top === 'inputs' || top === 'outputs') {
    const map = chain[top];
    if (second !== undefined && isRecord(map)) delete map[second];
    else delete chain[top];
    return;
  }
  delete chain[top];
}
