import type { RunEvent } from '../run-model/events.js';
import type { RunDetail, StepDetail, Truncated } from './run-service.js';

// What one answer of `toolchain serve` may carry of a run's values (its input, its outputs, each
// step's input and output): a run with large outputs must not make `GET /api/runs/ID` a 40 MB
// answer, nor the replay of its events an 84 MB one. A value whose JSON is over `valueBytes`,
// and any value over SMALL_BYTES once the answer has carried `answerBytes` of values, is left out
// and replaced by a marker `<field>_truncated: { bytes, href }` naming its size and the route that
// answers it whole (routes-run-values.ts). One Budget per answer (per event stream: for as long
// as it is open).

/** Values this small are never left out: a marker would be no shorter. */
export const SMALL_BYTES = 256;

export class Budget {
  private left: number;
  constructor(
    readonly valueBytes: number,
    answerBytes: number,
  ) {
    this.left = answerBytes;
  }

  /** The value's size when it is to be left out; otherwise undefined, and the value is counted. */
  omit(value: unknown): number | undefined {
    if (value === undefined) return undefined;
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? 'null');
    if (bytes > SMALL_BYTES && (bytes > this.valueBytes || bytes > this.left)) return bytes;
    this.left -= bytes;
    return undefined;
  }
}

/** `/api/runs/ID` and the routes under it. */
export function runHref(runId: string, rest = ''): string {
  return `/api/runs/${encodeURIComponent(runId)}${rest}`;
}

export function stepHref(runId: string, key: string): string {
  return runHref(runId, `/steps/${encodeURIComponent(key)}`);
}

/** `{ field: value }`, or `{ field_truncated: { bytes, href } }` when the budget leaves it out. */
function field(budget: Budget, name: string, value: unknown, href: string): Record<string, unknown> {
  if (value === undefined) return {};
  const bytes = budget.omit(value);
  return bytes === undefined ? { [name]: value } : { [`${name}_truncated`]: { bytes, href } satisfies Truncated };
}

/** A run's detail with its large values replaced by markers: the run's own first, then its steps in order. */
export function boundedDetail(detail: RunDetail, budget: Budget): RunDetail {
  const { input, outputs, steps, ...rest } = detail;
  const id = detail.run_id;
  const head = { ...field(budget, 'input', input, runHref(id, '/input')), ...field(budget, 'outputs', outputs, runHref(id, '/outputs')) };
  const bounded: Record<string, StepDetail> = {};
  for (const [key, step] of Object.entries(steps)) bounded[key] = boundedStep(step, budget, stepHref(id, key));
  // `input` and `outputs` are always keys of a RunDetail: undefined (left out of the JSON) unless whole.
  return { ...rest, input: undefined, outputs: undefined, ...head, steps: bounded };
}

function boundedStep(step: StepDetail, budget: Budget, href: string): StepDetail {
  const { input, output, ...rest } = step;
  return { ...rest, ...field(budget, 'input', input, href), ...field(budget, 'output', output, href) };
}

/**
 * The events of run `runId` with their large values replaced by markers. Sub-chains' events name
 * their own runs: the step keys (`step›substep`) are followed from their run:started events, as
 * the run view does. Not an async generator: a generator's `return` waits for the `next` at work,
 * which for a quiet run never comes, and the stream's place would never be given back.
 */
export function boundedEvents(runId: string, events: AsyncIterable<RunEvent>, budget: Budget, after = 0): AsyncIterable<{ readonly type: string }> {
  return {
    [Symbol.asyncIterator]: () => {
      const inner = events[Symbol.asyncIterator]();
      const bound = eventBounder(runId, budget, after);
      return {
        next: async (): Promise<IteratorResult<{ readonly type: string }>> => {
          const r = await inner.next();
          return r.done ? { done: true, value: undefined } : { done: false, value: bound(r.value) };
        },
        return: async (): Promise<IteratorResult<{ readonly type: string }>> => {
          await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

function eventBounder(runId: string, budget: Budget, after: number): (e: RunEvent) => { readonly type: string } {
  const prefixes = new Map<string, string>([[runId, '']]);
  let position = 0;
  return (e) => {
    // The first `after` are not sent (the client has them: Last-Event-ID), so they cost no budget.
    const skipped = ++position <= after;
    if (e.type === 'run:started' && e.parent !== undefined) prefixes.set(e.run_id, `${prefixes.get(e.parent.run_id) ?? ''}${e.parent.step}›`);
    if (skipped) return e;
    if (e.type === 'run:started' || e.type === 'run:finished') {
      const parentKey = e.parent !== undefined ? `${prefixes.get(e.parent.run_id) ?? ''}${e.parent.step}` : undefined;
      // A sub-chain's input and outputs are its step's: that step's route answers them.
      const href = parentKey !== undefined ? stepHref(runId, parentKey) : runHref(runId, e.type === 'run:started' ? '/input' : '/outputs');
      if (e.type === 'run:started') {
        const { input, ...rest } = e;
        return { ...rest, ...field(budget, 'input', input, href) };
      }
      const { outputs, ...rest } = e;
      return { ...rest, ...field(budget, 'outputs', outputs, href) };
    }
    if ((e.type === 'step:succeeded' || e.type === 'step:failed') && e.output !== undefined) {
      const { output, ...rest } = e;
      return { ...rest, ...field(budget, 'output', output, stepHref(runId, `${prefixes.get(e.run_id) ?? ''}${e.step}`)) };
    }
    return e;
  };
}
