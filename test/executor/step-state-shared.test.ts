import { describe, expect, it } from 'vitest';
import { PENDING, transition, type StepInput, type StepState } from '../../src/executor/index.js';

// Steps started in the same millisecond go through equal states, each its own: no step's state can
// be changed through another's, and every transition makes a new state.

const rules = (name: string, index: number) => ({ name, index, onError: 'fail' as const });

function step(name: string, index: number, inputs: StepInput[]): StepState[] {
  const seen: StepState[] = [];
  let state = PENDING;
  for (const input of inputs) {
    state = transition(state, input, rules(name, index))!;
    seen.push(state);
  }
  return seen;
}

describe('states shared by steps started together', () => {
  it('two steps started in one millisecond read the same start and attempt, and each ends with its own record', () => {
    const [aStart, aRun, aEnd] = step('a', 0, [{ type: 'start', at: 100 }, { type: 'attempt', attempt: 1 }, { type: 'succeed', at: 103, output: 1, attempts: 1, fallback: undefined }]);
    const [bStart, bRun, bEnd] = step('b', 1, [{ type: 'start', at: 100 }, { type: 'attempt', attempt: 1 }, { type: 'fail', at: 107, error: { code: 'TOOL_ERROR', message: 'no' }, attempts: 1 }]);
    expect(bStart).toEqual({ status: 'validating', started_at: 100, attempt: undefined, record: undefined });
    expect(bRun).toEqual({ status: 'running', started_at: 100, attempt: 1, record: undefined });
    expect(aStart).toEqual(bStart);
    expect(aRun).toEqual(bRun);
    expect(aEnd!.status === 'succeeded' && aEnd!.record).toMatchObject({ step: 'a', index: 0, started_at: 100, duration_ms: 3, output: 1 });
    expect(bEnd!.status === 'failed' && bEnd!.record).toMatchObject({ step: 'b', index: 1, started_at: 100, duration_ms: 7, attempts: 1 });
  });

  it('a retry of one step leaves the attempt the other steps of its millisecond are in untouched', () => {
    const [, aRun] = step('a', 0, [{ type: 'start', at: 200 }, { type: 'attempt', attempt: 1 }]);
    const [, , bRetrying, bSecond] = step('b', 1, [
      { type: 'start', at: 200 },
      { type: 'attempt', attempt: 1 },
      { type: 'retry', report: { attempt: 1, error: { code: 'TOOL_ERROR', message: 'x' }, duration_ms: 0, delay_ms: 0, fallback: undefined }, item: undefined },
      { type: 'attempt', attempt: 2 },
    ]);
    expect(bRetrying).toMatchObject({ status: 'retrying', started_at: 200, attempt: 1 });
    expect(bSecond).toMatchObject({ status: 'running', started_at: 200, attempt: 2 });
    expect(aRun).toEqual({ status: 'running', started_at: 200, attempt: 1, record: undefined });
  });

  it('a step started a millisecond later has its own start', () => {
    const [first] = step('a', 0, [{ type: 'start', at: 300 }]);
    const [later] = step('b', 1, [{ type: 'start', at: 301 }]);
    expect(first).toMatchObject({ started_at: 300 });
    expect(later).toMatchObject({ started_at: 301 });
  });
});
