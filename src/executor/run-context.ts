import type { StepError } from '../common/errors.js';
import type { RunContext } from '../expr/types.js';
import type { Run } from './run.js';

// The run context as an object: inputs, then each finished step's output by name; and a step's
// input_map resolved against it (or against one for_each element's view of it).

/**
 * A run's context, where no path (`$.constructor`, `$.__proto__`) reaches Object.prototype and a
 * name like `__proto__` would be an own property like any other. A short chain's context has fast
 * properties on an empty frozen prototype without one: made by `Object.create(null)`, it was a
 * dictionary from the start, which grew and was copied as the steps finished (640 of a diamond
 * run's 9,400 allocated bytes, and 9% of its time). A longer chain's stays a dictionary: adding a
 * hundred fast properties one by one grows their store each time (fanout100 5% slower).
 */
export function newContext(steps: number): Record<string, unknown> {
  return (steps <= FAST_CONTEXT_STEPS ? Object.create(CONTEXT_ROOT) : Object.create(null)) as Record<string, unknown>;
}

const CONTEXT_ROOT: object = Object.freeze(Object.create(null) as object);
const FAST_CONTEXT_STEPS = 16;

/** What one element of a `for_each` reads: the run's context, with `$.item` and `$.index` its own. */
export function elementScope(context: Record<string, unknown>, item: unknown, index: number): Record<string, unknown> {
  const scope = Object.create(context) as Record<string, unknown>;
  scope.item = item;
  scope.index = index;
  return scope;
}

/** The step's input_map resolved against `scope` (one for_each element's view of the run context). */
export function resolveArgs(run: Run, i: number, scope: RunContext): { args: Record<string, unknown>; unresolved: StepError | undefined } {
  try {
    return { args: run.plan.steps[i]!.input.get(scope) as Record<string, unknown>, unresolved: undefined };
  } catch (error) {
    return { args: NO_ARGS, unresolved: unresolvable(error) };
  }
}

/** The arguments of a call whose input_map could not be resolved (it makes no attempt). */
export const NO_ARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export function unresolvable(error: unknown): StepError {
  return { code: 'VALIDATION_FAILED', message: `its input_map could not be resolved: ${(error as Error).message}` };
}
