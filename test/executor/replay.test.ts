import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.js';
import { compileChain } from '../../src/compiler/index.js';
import {
  createBinder,
  createInputChecker,
  effectsOf,
  executeChain,
  PENDING,
  transition,
  type ExecutorHost,
  type StepState,
} from '../../src/executor/index.js';
import { toStepRecord, type RunEvent, type StepFinishedEvent } from '../../src/run-model/events.js';
import type { StepRecord } from '../../src/run-model/step-record.js';
import { createRegistry } from '../../src/registry/index.js';

// A recorded step result is exactly what a transition to a final state produces, so a run
// is rebuilt by feeding recorded results back in — and then schedules exactly the steps that have
// no record.

const CHAIN = `name: shop
inputs: { n: integer }
steps:
  - { name: a, tool: inc, input_map: { v: $.n } }
  - { name: b, tool: inc, input_map: { v: $.a.v } }
  - { name: c, tool: inc, input_map: { v: $.a.v }, parallel: true }
  - { name: d, tool: inc, input_map: { v: $.b.v }, depends_on: [c] }
  - { name: e, tool: inc, input_map: { v: $.d.v } }
outputs: { total: $.e.v, side: $.c.v }
`;

function setup() {
  const calls: string[] = [];
  const registry = createRegistry();
  registry.register({ name: 'inc', parameters: { type: 'object', properties: { v: { type: 'integer' } } }, handler: (args, ctx) => (calls.push(ctx.step), { v: (args.v as number) + 1 }) });
  const { plan } = compileChain(CHAIN);
  let id = 0;
  const host: ExecutorHost = {
    clock: systemClock,
    random: Math.random,
    slots: undefined,
    newRunId: () => `run-${++id}`,
    chain: () => undefined,
    log: () => undefined,
    binder: createBinder(),
    checkInput: createInputChecker((schema) => registry.schemas.compile(schema, 'arguments').validate),
  };
  return { calls, plan: plan!, host, tools: () => registry.current() };
}

describe('replaying step records', () => {
  it('a run rebuilt from any subset of its records runs exactly the steps without one, with the same outputs', async () => {
    const { calls, plan, host, tools } = setup();
    const events: RunEvent[] = [];
    const first = await executeChain(host, plan, tools(), { n: 1 }, { onEvent: (e) => events.push(e) });
    expect(first.outputs).toEqual({ total: 5, side: 3 });
    const records = new Map(events.filter((e): e is StepFinishedEvent => e.type === 'step:succeeded').map((e) => [e.step, toStepRecord(e)]));
    expect([...records.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);

    const names = ['a', 'b', 'c', 'd', 'e'];
    for (let mask = 0; mask < 1 << names.length; mask++) {
      const kept = names.filter((_, k) => mask & (1 << k));
      const restored = new Map(kept.map((n) => [n, records.get(n)!]));
      calls.length = 0;
      const replayEvents: RunEvent[] = [];
      const again = await executeChain(host, plan, tools(), { n: 1 }, { onEvent: (e) => replayEvents.push(e), restored });
      expect(again.status).toBe('succeeded');
      expect(again.outputs).toEqual(first.outputs);
      expect(calls.sort()).toEqual(names.filter((n) => !kept.includes(n)));
      // Restored steps are finished without events; the others start and succeed as usual.
      const started = replayEvents.filter((e) => e.type === 'step:started').map((e) => (e as { step: string }).step);
      expect(started.sort()).toEqual(names.filter((n) => !kept.includes(n)));
      for (const n of kept) expect(again.steps[n]).toMatchObject({ status: 'succeeded', attempts: 1 });
    }
  });

  it('a failed record is not restored: redrive runs the step again', async () => {
    const { calls, plan, host, tools } = setup();
    const failed: StepRecord = { step: 'b', index: 1, status: 'failed', attempts: 3, error: { code: 'TOOL_ERROR', message: 'x' }, started_at: 0, duration_ms: 5 };
    const a: StepRecord = { step: 'a', index: 0, status: 'succeeded', attempts: 1, output: { v: 2 }, started_at: 0, duration_ms: 1 };
    const result = await executeChain(host, plan, tools(), { n: 1 }, { restored: new Map([['a', a], ['b', failed]]) });
    expect(result.outputs).toEqual({ total: 5, side: 3 });
    expect(calls.sort()).toEqual(['b', 'c', 'd', 'e']);
  });
});

describe('the step transition function', () => {
  const rules = { name: 's', index: 0, onError: 'fail' as const };
  const step = (state: StepState, ...inputs: Parameters<typeof transition>[1][]): StepState | undefined =>
    inputs.reduce<StepState | undefined>((s, input) => (s === undefined ? undefined : transition(s, input, rules)), state);

  it('walks pending → validating → running → retrying → running → succeeded, and the final record is the stored one', () => {
    const report = { attempt: 1, error: { code: 'TOOL_ERROR' as const, message: 'x' }, duration_ms: 3, delay_ms: 10, fallback: undefined };
    const s1 = step(PENDING, { type: 'start', at: 100 })!;
    expect(s1).toEqual({ status: 'validating', started_at: 100 });
    const s2 = step(s1, { type: 'attempt', attempt: 1 }, { type: 'retry', report, item: undefined })!;
    expect(s2).toEqual({ status: 'retrying', started_at: 100, attempt: 1 });
    const done = step(s2, { type: 'attempt', attempt: 2 }, { type: 'succeed', at: 130, output: { ok: 1 }, attempts: 2, fallback: undefined })!;
    expect(done.status).toBe('succeeded');
    expect('record' in done && done.record).toMatchObject({ step: 's', index: 0, status: 'succeeded', attempts: 2, output: { ok: 1 }, started_at: 100, duration_ms: 30 });
    // Replaying that record into a pending step gives the same final state.
    expect('record' in done && transition(PENDING, { type: 'restore', record: done.record }, rules)).toEqual(done);
  });

  it('ignores what does not apply: a late result after the end, a second start, a retry of a pending step', () => {
    const done = step(PENDING, { type: 'start', at: 1 }, { type: 'fail', at: 2, error: { code: 'TIMEOUT', message: 't' }, attempts: 1 })!;
    expect(transition(done, { type: 'succeed', at: 3, output: 1, attempts: 1, fallback: undefined }, rules)).toBeUndefined();
    expect(transition(done, { type: 'start', at: 3 }, rules)).toBeUndefined();
    expect(transition(PENDING, { type: 'retry', report: { attempt: 1, error: { code: 'TIMEOUT', message: '' }, duration_ms: 0, delay_ms: 0, fallback: undefined }, item: undefined }, rules)).toBeUndefined();
  });

  it('names the effects: a failure stops the run unless on_error is continue, which writes { error } and releases dependents', () => {
    const running = step(PENDING, { type: 'start', at: 1 }, { type: 'attempt', attempt: 1 })!;
    const fail = { type: 'fail', at: 2, error: { code: 'TIMEOUT', message: 't' }, attempts: 1 } as const;
    const failed = transition(running, fail, rules)!;
    const STOP_RUN = 32;
    const RELEASE = 16;
    expect(effectsOf(running, failed, fail, rules) & STOP_RUN).toBe(STOP_RUN);
    const lenient = { ...rules, onError: 'continue' as const };
    const continued = transition(running, fail, lenient)!;
    expect('record' in continued && continued.record.output).toEqual({ error: { code: 'TIMEOUT', message: 't' } });
    expect(effectsOf(running, continued, fail, lenient) & (STOP_RUN | RELEASE)).toBe(RELEASE);
  });
});
