import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type RunEvent } from '../../src/index.js';
import type { Clock, TimerHandle } from '../../src/common/clock.js';
import { openStore } from '../../src/store/open-store.js';

// `repeat:` (polling) on a test clock, through the library with a real SQLite store: the rounds a
// run makes, the durable sleeps between them (the run parks in the store; each round starts
// `every` after the last one ended), the output, REPEAT_EXHAUSTED, and a run taken up by a new
// engine on the same store that does not run a recorded round again.

const root = mkdtempSync(join(tmpdir(), 'toolchain-repeat-'));
let n = 0;
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const T0 = Date.parse('2026-12-01T05:00:00.000Z');
const EVERY = 10 * 60_000;

/** Time moves when the test says; timers never fire (nothing here waits on one). */
function handClock(start: number): Clock & { add(ms: number): void } {
  let now = start;
  return { now: () => now, setTimeout: (): TimerHandle => 0, clearTimeout: (): void => undefined, add: (ms) => void (now += ms) };
}

const CHAIN = (max: number): string => `name: poll
inputs: { job: string }
steps:
  - name: status
    tool: check
    input_map: { job: $.job }
    repeat: { until: "$.this.state == 'done'", every: 10m, max_attempts: ${max} }
  - { name: after, tool: note, input_map: { text: $.status.call } }
outputs: { call: $.status.call, after: $.after.text }
`;

/** An engine on `store` whose `check` answers `done` from its `doneAt`-th call on (counted across engines by `calls`). */
async function engineOn(store: string, clock: Clock, calls: string[], doneAt = 4, max = 5): Promise<Engine> {
  const engine = await createEngine({ cache: 'off', store, clock, wakeIntervalMs: 2 ** 30 });
  engines.push(engine);
  engine.registerTool({
    name: 'check',
    parameters: { type: 'object', properties: { job: { type: 'string' } }, required: ['job'] },
    handler: (a: { job: string }, ctx) => {
      calls.push(ctx.idempotencyKey);
      return { call: calls.length, state: calls.length >= doneAt ? 'done' : 'pending', job: a.job };
    },
  });
  engine.registerTool({ name: 'note', parameters: { type: 'object', properties: { text: {} } }, handler: (a: { text?: unknown }) => ({ text: a.text }) });
  engine.addChain(CHAIN(max));
  return engine;
}

const newStore = (): string => `sqlite:${join(root, `runs-${++n}.db`)}`;

describe('repeat', () => {
  it('runs rounds until `until` holds: 4 rounds recorded, 3 durable sleeps of `every`, the 4th round is the output', async () => {
    const store = newStore();
    const clock = handClock(T0);
    const calls: string[] = [];
    const engine = await engineOn(store, clock, calls);
    const events: RunEvent[] = [];
    const onEvent = (e: RunEvent): void => void events.push(e);

    let result = await engine.run('poll', { job: 'j1' }, { untilWaiting: true, onEvent });
    const id = result.run_id;
    expect(result.status).toBe('waiting');
    // The sleep is not over until the clock says so: a resume before is refused.
    clock.add(EVERY - 1);
    expect((await engine.resume(id, { untilWaiting: true })).error?.code).toBe('RUN_WAITING');
    clock.add(1);
    for (let round = 2; round <= 4; round++) {
      expect(calls).toHaveLength(round - 1);
      result = await engine.resume(id, { untilWaiting: true, onEvent });
      if (round < 4) {
        expect(result.status).toBe('waiting');
        clock.add(EVERY);
      }
    }
    expect(result).toMatchObject({ status: 'succeeded', outputs: { call: 4, after: 4 } });
    expect(result.steps.status).toMatchObject({ status: 'succeeded', attempts: 4 });
    expect(calls).toEqual([1, 2, 3, 4].map((k) => `${id}:status#${k}`));

    const s = await openStore(store);
    const steps = new Map((await s.getSteps(id)).map((st) => [st.key, st]));
    await s.close();
    expect([...steps.keys()].sort()).toEqual(['after', 'status', 'status#1', 'status#2', 'status#3', 'status#4']);
    expect([1, 2, 3, 4].map((k) => (steps.get(`status#${k}`)!.output as { call: number }).call)).toEqual([1, 2, 3, 4]);
    expect(steps.get('status')!.output).toEqual(steps.get('status#4')!.output);
    // Each round started `every` after the one before ended.
    for (let k = 2; k <= 4; k++) {
      const before = steps.get(`status#${k - 1}`)!;
      expect(steps.get(`status#${k}`)!.started_at - (before.started_at + before.duration_ms)).toBe(EVERY);
    }
    // Three sleeps, one before each of rounds 2–4, each kept in the store as a wait.
    const sleeps = await engine.runs.waits({ run_id: id });
    expect(sleeps.map((w) => [w.kind, w.key, w.until! - T0])).toEqual([
      ['sleep', 'status#2', EVERY],
      ['sleep', 'status#3', 2 * EVERY],
      ['sleep', 'status#4', 3 * EVERY],
    ]);
    expect(events.filter((e) => e.type === 'run:waiting')).toHaveLength(3);
    const rounds = events.filter((e) => e.type === 'step:round');
    expect(rounds.map((e) => [e.round, e.done, e.next_at === undefined ? null : e.next_at - T0])).toEqual([
      [1, false, EVERY],
      [2, false, 2 * EVERY],
      [3, false, 3 * EVERY],
      [4, true, null],
    ]);
  });

  it('fails with REPEAT_EXHAUSTED after max_attempts rounds whose `until` stayed false', async () => {
    const clock = handClock(T0);
    const calls: string[] = [];
    const engine = await engineOn(newStore(), clock, calls, 4, 3);
    let result = await engine.run('poll', { job: 'j2' }, { untilWaiting: true });
    while (result.status === 'waiting') {
      clock.add(EVERY);
      result = await engine.resume(result.run_id, { untilWaiting: true });
    }
    expect(calls).toHaveLength(3);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'REPEAT_EXHAUSTED', step: 'status' });
    expect(result.error?.message).toContain("$.this.state == 'done'");
    expect(result.error?.message).toContain('3 rounds');
    expect(result.steps.after?.status).toBe('pending');
    const detail = await engine.runs.get(result.run_id);
    expect(Object.keys(detail!.steps).filter((k) => k.startsWith('status#'))).toEqual(['status#1', 'status#2', 'status#3']);
  });

  it('is taken up by a new engine on the store between rounds: no recorded round runs again', async () => {
    const store = newStore();
    const clock = handClock(T0);
    const calls: string[] = [];
    const first = await engineOn(store, clock, calls);
    let result = await first.run('poll', { job: 'j3' }, { untilWaiting: true });
    clock.add(EVERY);
    result = await first.resume(result.run_id, { untilWaiting: true });
    expect(result.status).toBe('waiting');
    expect(calls).toHaveLength(2);
    await first.close();

    // Another process, later: it continues from round 3.
    clock.add(EVERY);
    const second = await engineOn(store, clock, calls);
    const id = result.run_id;
    result = await second.resume(id, { untilWaiting: true });
    expect(result.status).toBe('waiting');
    clock.add(EVERY);
    result = await second.resume(id, { untilWaiting: true });
    expect(result).toMatchObject({ status: 'succeeded', outputs: { call: 4 } });
    expect(calls).toEqual([1, 2, 3, 4].map((k) => `${id}:status#${k}`));
  });

  it('retries within a round (retry is per round) and fails the step with the error of a round that fails for good', async () => {
    const engine = await createEngine({ cache: 'off', store: newStore(), wakeIntervalMs: 20 });
    engines.push(engine);
    const seen: string[] = [];
    // Call 2 fails once (then its retry succeeds); call 5 and 6 fail: round 4's two attempts.
    engine.registerTool({
      name: 'flaky',
      parameters: { type: 'object' },
      handler: (_a: unknown, ctx) => {
        seen.push(`${ctx.idempotencyKey.split(':')[1]} attempt ${ctx.attempt}`);
        if (seen.length === 2 || seen.length >= 5) throw Object.assign(new Error('busy'), { code: 'BUSY' });
        return { n: seen.length };
      },
    });
    engine.addChain(`name: flaky_poll
steps:
  - name: probe
    tool: flaky
    retry: { max_attempts: 2, backoff: { initial: 1ms } }
    repeat: { until: "$.this.n > 99", every: 30ms, max_attempts: 5 }
`);
    const result = await engine.run('flaky_poll', {});
    expect(seen).toEqual(['probe#1 attempt 1', 'probe#2 attempt 1', 'probe#2 attempt 2', 'probe#3 attempt 1', 'probe#4 attempt 1', 'probe#4 attempt 2']);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'BUSY', step: 'probe', message: 'round 4: busy' });
    expect(result.steps.probe).toMatchObject({ status: 'failed', attempts: 6 });
    const detail = await engine.runs.get(result.run_id);
    expect(['probe#1', 'probe#2', 'probe#3', 'probe#4'].map((k) => [k, detail!.steps[k]?.status, detail!.steps[k]?.attempts])).toEqual([
      ['probe#1', 'succeeded', 1],
      ['probe#2', 'succeeded', 2],
      ['probe#3', 'succeeded', 1],
      ['probe#4', 'failed', 2],
    ]);
  });

  it('is woken in-process by the engine that awaits it; on_error: continue turns REPEAT_EXHAUSTED into an output', async () => {
    const engine = await createEngine({ cache: 'off', wakeIntervalMs: 20 });
    engines.push(engine);
    let calls = 0;
    engine.registerTool({ name: 'never', parameters: { type: 'object' }, handler: () => ({ n: ++calls }) });
    engine.addChain(`name: give_up
steps:
  - name: probe
    tool: never
    on_error: continue
    repeat: { until: "$.this.n >= 10", every: 20ms, max_attempts: 3 }
outputs: { probe: $.probe }
`);
    const events: RunEvent[] = [];
    const result = await engine.run('give_up', {}, { onEvent: (e) => void events.push(e) });
    expect(calls).toBe(3);
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toMatchObject({ probe: { error: { code: 'REPEAT_EXHAUSTED' } } });
    expect(events.filter((e) => e.type === 'run:woken')).toHaveLength(2);
  });

  it('runs a sub-chain per round, its steps recorded under the round', async () => {
    const clock = handClock(T0);
    const engine = await createEngine({ cache: 'off', store: newStore(), clock });
    engines.push(engine);
    let calls = 0;
    engine.registerTool({ name: 'count', parameters: { type: 'object' }, handler: () => ({ n: ++calls }) });
    engine.addChain(`name: inner
steps:
  - { name: look, tool: count }
outputs: { n: $.look.n }
`);
    engine.addChain(`name: outer
steps:
  - name: sub
    chain: inner
    repeat: { until: "$.this.n >= 2", every: 1m, max_attempts: 3 }
outputs: { n: $.sub.n }
`);
    let result = await engine.run('outer', {}, { untilWaiting: true });
    clock.add(60_000);
    result = await engine.resume(result.run_id, { untilWaiting: true });
    expect(result).toMatchObject({ status: 'succeeded', outputs: { n: 2 } });
    const detail = await engine.runs.get(result.run_id);
    expect(Object.keys(detail!.steps).sort()).toEqual(['sub', 'sub#1', 'sub#1›look', 'sub#2', 'sub#2›look']);
  });
});
