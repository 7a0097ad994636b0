import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryable } from '../../src/call/index.js';
import { createTestClock } from '../fixtures/executor/test-clock.js';
import { createRecorder, flaky } from '../fixtures/executor/tools.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';

const one = (tool: string, extra = '', name = 'c'): string => `name: ${name}\nsteps:\n  - name: s\n    tool: ${tool}\n${extra}`;

describe('backoff (pure)', () => {
  const policy = { initialMs: 100, factor: 2, maxMs: 1000, jitter: 'none' as const };
  it('grows by the factor and stops at max', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, Math.random))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
  it('full jitter picks in [0, capped]', () => {
    expect(backoffDelay({ ...policy, jitter: 'full' }, 3, () => 0.5)).toBe(200);
    expect(backoffDelay({ ...policy, jitter: 'full' }, 9, () => 0.999)).toBe(999);
  });
  it('never retries validation errors or refusals; retry_on narrows', () => {
    const base = { maxAttempts: 3, backoff: policy };
    expect(isRetryable(base, 'TOOL_ERROR')).toBe(true);
    expect(isRetryable(base, 'VALIDATION_FAILED')).toBe(false);
    expect(isRetryable(base, 'APPROVAL_DENIED')).toBe(false);
    expect(isRetryable({ ...base, retryOn: new Set(['TIMEOUT']) }, 'TOOL_ERROR')).toBe(false);
    expect(isRetryable({ ...base, retryOn: new Set(['TIMEOUT']) }, 'TIMEOUT')).toBe(true);
  });
});

describe('retry (injected clock)', () => {
  it('counts attempts and waits initial·factor^(n−1), capped', async () => {
    const clock = createTestClock();
    const tool = flaky('flaky', 4);
    const engine = await engineWith([tool], [one('flaky', '    retry: { max_attempts: 5, backoff: { initial: 100ms, factor: 3, max: 1s, jitter: none } }\n')], { clock });
    const log = eventLog();
    // 1.3 s of backoff, all of it on the test clock (the delays below).
    const result = await engine.run('c', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    expect(result.steps.s).toMatchObject({ status: 'succeeded', attempts: 5 });
    expect(tool.calls).toBe(5);
    expect(clock.delays).toEqual([100, 300, 900, 1000]);
    const retrying = log.events.filter((e) => e.type === 'step:retrying');
    expect(retrying.map((e) => [e.attempt, e.delay_ms, e.error.code])).toEqual([
      [1, 100, 'FLAKY'], [2, 300, 'FLAKY'], [3, 900, 'FLAKY'], [4, 1000, 'FLAKY'],
    ]);
    expect(result.outputs).toEqual({ ok: true, attempt: 5 });
    expect(result.duration_ms).toBe(2300);
  });

  it('full jitter uses the injected random', async () => {
    const clock = createTestClock();
    const engine = await engineWith([flaky('flaky', 2)], [one('flaky', '    retry: { max_attempts: 3, backoff: { initial: 1s, factor: 2 } }\n')], { clock, random: () => 0.25 });
    await engine.run('c', {});
    expect(clock.delays).toEqual([250, 500]);
  });

  it('gives up after max_attempts with the last error', async () => {
    const clock = createTestClock();
    const tool = flaky('flaky', 10);
    const engine = await engineWith([tool], [one('flaky', '    retry: { max_attempts: 3, backoff: { initial: 10ms } }\n')], { clock });
    const result = await engine.run('c', {});
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'FLAKY', step: 's', message: 'flaky failed (call 3)' });
    expect(result.steps.s).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'FLAKY' } });
  });

  it('retry_on limits which codes are retried', async () => {
    const clock = createTestClock();
    const tool = flaky('flaky', 10, 'BAD');
    const engine = await engineWith([tool], [one('flaky', '    retry: { max_attempts: 3, retry_on: [TIMEOUT] }\n')], { clock });
    const result = await engine.run('c', {});
    expect(tool.calls).toBe(1);
    expect(result.steps.s!.attempts).toBe(1);
  });

  it('never retries a validation failure, and names step, key and path', async () => {
    const clock = createTestClock();
    const calls: unknown[] = [];
    const engine = await engineWith(
      [
        { name: 'locate', handler: async () => ({ country: 'JP' }) },
        {
          name: 'facts',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          handler: async (a) => void calls.push(a),
        },
      ],
      [`name: c\nsteps:\n  - { name: locate, tool: locate }\n  - name: facts\n    tool: facts\n    input_map: { city: $.locate.city }\n    retry: { max_attempts: 4 }\n`],
      { clock },
    );
    const result = await engine.run('c', {});
    expect(calls).toEqual([]);
    expect(result.error?.code).toBe('VALIDATION_FAILED');
    expect(result.steps.facts!.attempts).toBe(0);
    expect(result.error!.step).toBe('facts');
    expect(result.error!.message).toContain("key 'city' from $.locate.city matched nothing");
  });
});

describe('fallback', () => {
  const retry = (fb: string): string => `    retry:\n      max_attempts: 2\n      backoff: { initial: 1ms }\n      fallback: ${fb}\n`;
  const tz = {
    name: 'clock',
    parameters: { type: 'object', properties: { tz: { type: 'string' }, h: { type: 'integer' } }, required: ['tz'] },
    handler: async (a: Record<string, unknown>) => {
      if (a.tz !== 'UTC') throw new Error(`unknown zone ${String(a.tz)}`);
      return { time: '12:00', tz: a.tz, h: a.h };
    },
  };

  it('input_map: overrides merged over the resolved arguments, called once more', async () => {
    const engine = await engineWith([tz], [`name: c\nsteps:\n  - name: s\n    tool: clock\n    input_map: { tz: Mars/Olympus, h: 12 }\n${retry('{ input_map: { tz: UTC } }')}`], { clock: createTestClock() });
    const log = eventLog();
    const result = await engine.run('c', {}, { onEvent: log.onEvent });
    expect(result.outputs).toEqual({ time: '12:00', tz: 'UTC', h: 12 });
    expect(result.steps.s!.attempts).toBe(3);
    const done = log.events.find((e) => e.type === 'step:succeeded');
    expect(done).toMatchObject({ fallback: 'input' });
    expect(log.events.filter((e) => e.type === 'step:retrying').map((e) => e.fallback)).toEqual([undefined, 'input']);
  });

  it('tool: another tool with the same arguments', async () => {
    const engine = await engineWith(
      [tz, { name: 'backup', handler: async (a) => ({ backup: true, tz: a.tz }) }],
      [`name: c\nsteps:\n  - name: s\n    tool: clock\n    input_map: { tz: Mars/Olympus }\n${retry('{ tool: backup }')}`],
      { clock: createTestClock() },
    );
    const result = await engine.run('c', {});
    expect(result.outputs).toEqual({ backup: true, tz: 'Mars/Olympus' });
  });

  it('output: a fixed value, no further call', async () => {
    const tool = flaky('flaky', 10);
    const engine = await engineWith([tool], [one('flaky', retry('{ output: { time: unknown } }'))], { clock: createTestClock() });
    const log = eventLog();
    const result = await engine.run('c', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ time: 'unknown' });
    expect(tool.calls).toBe(2);
    expect(log.events.find((e) => e.type === 'step:succeeded')).toMatchObject({ fallback: 'output', attempts: 2 });
  });

  it('directly on a step without retry: one attempt, then the fallback', async () => {
    const tool = flaky('flaky', 10);
    const engine = await engineWith(
      [tool, { name: 'backup', handler: async () => ({ from: 'backup' }) }],
      [one('flaky', '    fallback: { tool: backup }\n'), one('flaky', '    fallback: { output: 7 }\n', 'fixed')],
      { clock: createTestClock() },
    );
    const log = eventLog();
    const result = await engine.run('c', {}, { onEvent: log.onEvent });
    expect(result.outputs).toEqual({ from: 'backup' });
    expect(tool.calls).toBe(1);
    expect(result.steps.s).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(log.trace()).toEqual(['run:started', 'step:started s', 'step:retrying s', 'step:succeeded s', 'run:finished']);
    expect((await engine.run('fixed', {})).outputs).toBe(7);
  });

  it('a fallback both on the step and under retry is a definition error at the step-level one', async () => {
    const { compileChain } = await import('../../src/compiler/index.js');
    const { diagnostics } = compileChain(`name: c\nsteps:\n  - name: s\n    tool: t\n    fallback: { output: 1 }\n    retry:\n      max_attempts: 2\n      fallback: { output: 2 }\n`);
    expect(diagnostics.map((d) => `${d.code} ${d.line}:${d.col}`)).toEqual(['BAD_VALUE 5:15']);
  });

  it('a failing fallback fails the step with its own error', async () => {
    const engine = await engineWith([flaky('flaky', 10), flaky('worse', 10, 'WORSE')], [one('flaky', retry('{ tool: worse }'))], { clock: createTestClock() });
    const result = await engine.run('c', {});
    expect(result.error).toMatchObject({ code: 'WORSE', step: 's' });
  });
});

describe('timeouts', () => {
  it('fails at the deadline even when the tool ignores its signal', async () => {
    const rec = createRecorder();
    // The tool sleeps far past the test's timeout: an engine that waited for it would never end.
    const engine = await engineWith([rec.sleeper('deaf', 600_000, { listen: false })], [one('deaf', '    timeout: 50ms\n')]);
    const result = await engine.run('c', {});
    expect(result.error).toMatchObject({ code: 'TIMEOUT', step: 's' });
    expect(result.steps.s!.duration_ms).toBeGreaterThanOrEqual(45);
  });

  it("uses the tool's own timeout when the step sets none, and retries timeouts", async () => {
    let calls = 0;
    const engine = await engineWith(
      [{ name: 'slow', timeout: '30ms', handler: () => (++calls < 3 ? new Promise(() => undefined) : Promise.resolve({ ok: calls })) }],
      [one('slow', '    retry: { max_attempts: 3, backoff: { initial: 1ms } }\n')],
    );
    const result = await engine.run('c', {});
    expect(result.outputs).toEqual({ ok: 3 });
    expect(result.steps.s!.attempts).toBe(3);
  });

  it('the signal fires at the deadline for tools that listen', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('polite', 1000)], [one('polite', '    timeout: 30ms\n')]);
    await engine.run('c', {});
    await new Promise((r) => setTimeout(r, 10));
    expect(rec.callOf('s').aborted).toBe(true);
  });

  it('a chain timeout ends the run with RUN_TIMEOUT', async () => {
    const rec = createRecorder();
    // Naps far past the test's timeout: only the chain's timeout can end this run.
    const engine = await engineWith([rec.sleeper('nap', 600_000)], [`name: c\ntimeout: 60ms\nsteps:\n  - { name: a, tool: nap }\n  - { name: b, tool: nap }\n`]);
    const result = await engine.run('c', {});
    expect(result.error?.code).toBe('RUN_TIMEOUT');
    expect(result.steps).toMatchObject({ a: { status: 'failed', error: { code: 'RUN_TIMEOUT' } }, b: { status: 'pending', attempts: 0 } });
    expect(rec.callOf('a').aborted).toBe(true);
  });
});

describe('failure and cancellation', () => {
  const SIBLINGS = `name: c
steps:
  - { name: slow1, tool: nap, input_map: { ms: 600000 } }
  - { name: slow2, tool: nap, parallel: true, input_map: { ms: 600000 } }
  - { name: bad, tool: nap, parallel: true, input_map: { ms: 20, fail: true } }
  - { name: after, tool: nap }
`;

  it('a failing step aborts running siblings through their signals and starts nothing new', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('nap')], [SIBLINGS]);
    const log = eventLog();
    const result = await engine.run('c', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'bad' });
    expect(result.steps).toMatchObject({
      slow1: { status: 'failed', error: { code: 'ABORTED' } },
      slow2: { status: 'failed', error: { code: 'ABORTED' } },
      bad: { status: 'failed' },
      after: { status: 'pending' },
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(rec.callOf('slow1').aborted).toBe(true);
    expect(rec.callOf('slow2').aborted).toBe(true);
    expect(rec.calls.map((c) => c.step)).not.toContain('after');
    expect(log.trace().slice(-4)).toEqual(['step:failed bad', 'step:failed slow1', 'step:failed slow2', 'run:finished']);
  });

  it("the caller's signal cancels the whole run with ABORTED", async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('nap', 2000)], [`name: c\nsteps:\n  - { name: a, tool: nap }\n  - { name: b, tool: nap }\n`]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await engine.run('c', {}, { signal: controller.signal });
    expect(result).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' } });
    expect(result.steps).toMatchObject({ a: { status: 'failed', error: { code: 'ABORTED' } }, b: { status: 'pending' } });
    await new Promise((r) => setTimeout(r, 10));
    expect(rec.callOf('a').aborted).toBe(true);
    // An already-aborted signal runs nothing.
    const again = await engine.run('c', {}, { signal: controller.signal });
    expect(again.error?.code).toBe('ABORTED');
    expect(rec.calls).toHaveLength(1);
  });

  it('on_error: continue gives the step an error output and the run goes on', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('nap')],
      [`name: c\nsteps:\n  - { name: a, tool: nap, input_map: { fail: true }, on_error: continue }\n  - { name: b, tool: nap, input_map: { seen: $.a.error.code } }\n`],
    );
    const result = await engine.run('c', {});
    expect(result.status).toBe('succeeded');
    expect(result.steps.a).toMatchObject({ status: 'failed', error: { code: 'TOLD_TO_FAIL' } });
    expect(result.outputs).toEqual({ seen: 'TOLD_TO_FAIL', step: 'b' });
  });
});

describe('dangerous tools', () => {
  const wipe = { name: 'wipe', dangerous: true, handler: async () => ({ wiped: true }) };
  it('without approval the tool never runs: APPROVAL_DENIED, not retried', async () => {
    let ran = false;
    const engine = await engineWith([{ ...wipe, handler: async () => ((ran = true), {}) }], [one('wipe', '    retry: { max_attempts: 3 }\n')]);
    const result = await engine.run('c', {});
    expect(result.error?.code).toBe('APPROVAL_DENIED');
    expect(result.steps.s!.attempts).toBe(1);
    expect(ran).toBe(false);
    const refused = await engine.run('c', {}, { approve: () => false });
    expect(refused.error?.code).toBe('APPROVAL_DENIED');
  });
  it('runs when approve says true, and is asked with tool, args, step and run id', async () => {
    const engine = await engineWith([wipe], [`name: c\nsteps:\n  - { name: s, tool: wipe, input_map: { path: /tmp/x } }\n`]);
    const asked: unknown[] = [];
    const result = await engine.run('c', {}, { approve: async (req) => (asked.push(req), true) });
    expect(result.outputs).toEqual({ wiped: true });
    expect(asked).toEqual([{ tool: 'wipe', args: { path: '/tmp/x' }, step: 's', run_id: result.run_id }]);
  });
});
