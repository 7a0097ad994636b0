import { parseWaitDuration } from '../expr/duration.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { RawStep } from './compile-step.js';
import type { CompiledValue } from '../expr/types.js';
import type { WaitPlan } from './plan.js';

// Steps that wait: `sleep`, `sleep_until`, `wait_for` (an event) and `approval` (a person). What
// the file fixes becomes the step's WaitPlan; what it reads from the run becomes its input, so
// that references make DAG edges and are checked like any input_map. A waiting step has no
// input_map of its own and no for_each (a run waits for one thing per step).

export function compileWait(raw: RawStep, pointer: string, sink: DiagnosticSink): WaitPlan | undefined {
  const kind = raw.sleep !== undefined ? 'sleep' : raw.sleep_until !== undefined ? 'sleep_until' : raw.wait_for !== undefined ? 'wait_for' : raw.approval !== undefined ? 'approval' : undefined;
  if (kind === undefined) return undefined;
  if (raw.input_map !== undefined) sink.error('BAD_VALUE', `${pointer}/input_map`, `step '${raw.name}' waits (${kind}): it takes no input_map; what it reads goes in ${kind === 'wait_for' ? 'wait_for.match' : kind === 'approval' ? 'approval.prompt' : kind}`);
  if (raw.for_each !== undefined) sink.error('BAD_VALUE', `${pointer}/for_each`, `step '${raw.name}' waits (${kind}): a waiting step has no for_each; wait in a sub-chain run per element instead`);
  const duration = (value: unknown, at: string): number | undefined => {
    if (value === undefined) return undefined;
    return parseWaitDuration(value) ?? (sink.error('BAD_DURATION', at, `step '${raw.name}': ${JSON.stringify(value)} is not a duration`), undefined);
  };
  switch (kind) {
    case 'sleep':
      return { type: 'sleep', ms: duration(raw.sleep, `${pointer}/sleep`) ?? 1 };
    case 'sleep_until':
      return { type: 'sleep_until' };
    case 'wait_for': {
      const timeoutMs = duration(raw.wait_for!.timeout, `${pointer}/wait_for/timeout`);
      return { type: 'event', event: raw.wait_for!.event, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
    }
    case 'approval': {
      const timeoutMs = duration(raw.approval!.timeout, `${pointer}/approval/timeout`);
      const approvers = raw.approval!.approvers;
      return { type: 'approval', ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(approvers !== undefined ? { approvers: Object.freeze([...approvers]) } : {}) };
    }
  }
}

/** The part of a waiting step read from the run, and where it is in the file (`sleep` reads nothing). */
export function waitInput(raw: RawStep, pointer: string): { readonly key: string; readonly value: unknown; readonly at: string } | undefined {
  if (raw.sleep_until !== undefined) return { key: 'until', value: raw.sleep_until, at: `${pointer}/sleep_until` };
  if (raw.wait_for !== undefined) return { key: 'match', value: raw.wait_for.match ?? {}, at: `${pointer}/wait_for/match` };
  if (raw.approval !== undefined) return { key: 'prompt', value: raw.approval.prompt ?? `Approve step '${raw.name}'?`, at: `${pointer}/approval/prompt` };
  return undefined;
}

/** `{ [key]: value }` of a value compiled at its own place in the file: the step's input. */
export function keyedInput(key: string, value: CompiledValue): CompiledValue {
  return { get: (ctx) => ({ [key]: value.get(ctx) }), refs: value.refs, constant: value.constant, sources: value.refs.length > 0 ? { [key]: value.refs[0]!.source } : {} };
}

/** What it does, for people: `sleep 10m`, `sleep until`, `wait for payment.settled`, `approval`. */
export function waitLabel(raw: RawStep, wait: WaitPlan): string {
  switch (wait.type) {
    case 'sleep':
      return `sleep ${String(raw.sleep)}`;
    case 'sleep_until':
      return 'sleep until';
    case 'event':
      return `wait for ${wait.event}`;
    case 'approval':
      return 'approval';
  }
}
