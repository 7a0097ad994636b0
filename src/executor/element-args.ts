import type { ChainPlan } from '../compiler/plan.js';
import { elementScope, newContext } from './run-context.js';

// What one element of a distributed `for_each` may be asked to do, worked out on the worker from
// the run's record and its chain's plan, never taken from the job: a job in Redis is only a
// request to run element i of step S of run R. The step must be a `distribute: true` for_each of
// the chain the run records, i must index the array its `for_each` path selects in the run's
// context (the recorded input and outputs), and the arguments are its input_map resolved there
// for that element, as the run itself resolved them.

/** What the store recorded of a run: its input and its steps' results. */
export interface RecordedRun {
  readonly chain: string;
  readonly input: unknown;
  readonly steps: readonly { readonly key: string; readonly status: string; readonly output?: unknown }[];
}

/** The element source of one step of one recorded run: its context and the array it iterates, or why there is none. */
export type ElementSource = { readonly ok: true; readonly stepIndex: number; readonly context: Record<string, unknown>; readonly items: readonly unknown[] } | { readonly ok: false; readonly message: string };

export function elementSource(plan: ChainPlan, run: RecordedRun, step: string): ElementSource {
  if (run.chain !== plan.name) return { ok: false, message: `the run records chain '${run.chain}', not '${plan.name}'` };
  const stepIndex = plan.steps.findIndex((s) => s.name === step);
  const planned = plan.steps[stepIndex];
  if (planned === undefined || planned.forEach?.distribute !== true) return { ok: false, message: `chain '${plan.name}' has no distributed for_each step '${step}'` };
  const context = newContext(plan.steps.length);
  if (typeof run.input === 'object' && run.input !== null) Object.assign(context, run.input);
  const names = new Set(plan.steps.map((s) => s.name));
  for (const r of run.steps) {
    if (names.has(r.key) && (r.status === 'succeeded' || r.status === 'failed' || r.status === 'skipped')) context[r.key] = r.output ?? null;
  }
  // The for_each starts only once the steps it reads are done: each must have a record.
  for (const w of planned.waitsFor) if (!(plan.steps[w]!.name in context)) return { ok: false, message: `step '${plan.steps[w]!.name}', which '${step}' waits for, has no recorded result` };
  let items: unknown;
  try {
    items = planned.forEach.items.get(context);
  } catch (error) {
    return { ok: false, message: `its for_each ${planned.forEach.items.source} could not be evaluated: ${(error as Error).message}` };
  }
  if (!Array.isArray(items)) return { ok: false, message: `its for_each ${planned.forEach.items.source} selects no array in the run's record` };
  return { ok: true, stepIndex, context, items };
}

/** Element `index`'s arguments from the plan, or why that element cannot be asked for. */
export function elementArgs(plan: ChainPlan, source: Extract<ElementSource, { ok: true }>, index: number): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
  if (!Number.isSafeInteger(index) || index < 0 || index >= source.items.length) return { ok: false, message: `element ${index} is not one of the ${source.items.length} the run's for_each selects` };
  const planned = plan.steps[source.stepIndex]!;
  const scope = elementScope(source.context, source.items[index], index);
  try {
    if (planned.forEach?.whenPerItem === true && planned.when?.test(scope) === false) return { ok: false, message: `element ${index} is skipped by its 'when'` };
    return { ok: true, args: planned.input.get(scope) as Record<string, unknown> };
  } catch (error) {
    return { ok: false, message: `its input_map could not be resolved for element ${index}: ${(error as Error).message}` };
  }
}
