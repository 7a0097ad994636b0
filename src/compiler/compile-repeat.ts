import { compileCondition } from '../expr/index.js';
import { parseWaitDuration } from '../expr/duration.js';
import type { PathRef } from '../expr/types.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { RawStep } from './compile-step.js';
import type { RepeatPlan } from './plan.js';

// `repeat: { until, every, max_attempts }`: a polling step. `until` is compiled like `when`; what
// it reads besides `$.this` (the round's output) makes DAG edges like any reference. A step that
// waits (`sleep`, `wait_for`, …) or runs per element (`for_each`) cannot repeat: the first already
// is a wait, and rounds of a whole for_each would re-run every element to decide one condition.

/** The root `$.this` names inside `until`: the round's output, not a step or an input. */
export const THIS = 'this';

export function compileRepeat(raw: RawStep, pointer: string, sink: DiagnosticSink): { repeat?: RepeatPlan; refs: PathRef[] } {
  const r = raw.repeat;
  if (r === undefined) return { refs: [] };
  const at = `${pointer}/repeat`;
  const waits = raw.sleep !== undefined ? 'sleep' : raw.sleep_until !== undefined ? 'sleep_until' : raw.wait_for !== undefined ? 'wait_for' : raw.approval !== undefined ? 'approval' : undefined;
  if (waits !== undefined) sink.error('BAD_VALUE', at, `step '${raw.name}' waits (${waits}): a waiting step cannot repeat; put the repeat on the step that checks, and let the rounds sleep`);
  if (raw.for_each !== undefined) sink.error('BAD_VALUE', at, `step '${raw.name}' has for_each: a for_each step cannot repeat; repeat a step of a sub-chain run per element instead`);
  const refs: PathRef[] = [];
  let until: RepeatPlan['until'] | undefined;
  if (typeof r.until === 'string') {
    const { condition, problems } = compileCondition(r.until);
    for (const p of problems) sink.error(p.code, `${at}/until`, `'repeat.until' of step '${raw.name}': ${p.message}`, p.offset !== undefined ? { offset: p.offset } : {});
    if (condition) {
      until = condition;
      for (const ref of condition.refs) if (ref.root !== THIS) refs.push({ ...ref, pointer: `${at}/until` });
    }
  }
  // The schema reports an `every` that is no duration and a missing or out-of-range max_attempts.
  const everyMs = r.every !== undefined ? parseWaitDuration(r.every) : undefined;
  const maxAttempts = Number.isInteger(r.max_attempts) && r.max_attempts >= 1 ? r.max_attempts : undefined;
  if (until === undefined || everyMs === undefined || maxAttempts === undefined) return { refs };
  return { repeat: Object.freeze({ until, everyMs, maxAttempts }), refs };
}
