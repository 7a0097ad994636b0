import type { PlanStep } from '../compiler/plan.js';
import type { ToolProgress } from '../registry/types.js';
import type { RunEvent } from '../run-model/events.js';
import type { Run } from './run.js';
import { isFinal, type StepInput, type StepState } from './step-state.js';

// The event a step transition stands for, built only when someone listens. Literals with
// every key present and no spreads: one object shape per event type keeps building them cheap;
// absent optional fields are undefined, which JSON leaves out.

export function stepEvent(run: Run, step: PlanStep, input: StepInput, next: StepState): RunEvent {
  const run_id = run.runId;
  const chain = run.plan.name;
  const parent = run.parent;
  if (input.type === 'start') {
    return { type: 'step:started', run_id, chain, timestamp: input.at, parent, step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase, attempt: 1 };
  }
  if (input.type === 'retry') {
    const r = input.report;
    return {
      type: 'step:retrying',
      run_id, chain, timestamp: run.clock.now(), parent,
      step: step.name, index: step.index, item: input.item, call: undefined, phase: run.phase,
      attempt: r.attempt, error: r.error, duration_ms: r.duration_ms, delay_ms: r.delay_ms, fallback: r.fallback,
    };
  }
  if (input.type === 'park') {
    return { type: 'step:waiting', run_id, chain, timestamp: input.at, parent, step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase, waiting_for: input.wait };
  }
  if (!isFinal(next)) throw new Error(`executor bug: no event for '${input.type}'`);
  const record = next.record;
  const timestamp = record.started_at + record.duration_ms;
  const { attempts, output, error, started_at, duration_ms, fallback } = record;
  switch (record.status) {
    case 'succeeded':
      return {
        type: 'step:succeeded',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'succeeded', attempt: attempts, attempts, output, error: undefined, started_at, duration_ms, fallback, reason: undefined,
      };
    case 'skipped':
      return {
        type: 'step:skipped',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'skipped', attempt: 0, attempts: 0, output: undefined, error: undefined, started_at, duration_ms: 0, fallback: undefined, reason: record.reason ?? 'when',
      };
    case 'failed':
      return {
        type: 'step:failed',
        run_id, chain, timestamp, parent,
        step: step.name, index: step.index, item: undefined, call: undefined, phase: run.phase,
        status: 'failed', attempt: Math.max(1, attempts), attempts, output, error: error!, started_at, duration_ms, fallback: undefined, reason: undefined,
      };
  }
}

/** A call's progress report (ctx.progress) as a step:progress event of its step. */
export function progressEvent(run: Run, label: string, attempt: number, item: number | undefined, report: ToolProgress): void {
  const step = run.plan.steps.find((s) => s.name === label);
  if (!step) return;
  const { progress, total, message } = report;
  run.emit({
    type: 'step:progress', run_id: run.runId, chain: run.plan.name, timestamp: run.clock.now(), parent: run.parent,
    step: step.name, index: step.index, item, call: undefined, phase: run.phase, attempt, progress, total, message,
  });
}
