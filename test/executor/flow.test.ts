import { describe, expect, it } from 'vitest';
import { createRecorder } from '../fixtures/executor/tools.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';

describe('the skip table', () => {
  const CHAIN = `name: skips
inputs: { go: boolean }
steps:
  - { name: gate, tool: echo, when: $.go == true }
  - { name: reads, tool: echo, input_map: { x: $.gate.step } }
  - { name: names, tool: echo, depends_on: [gate], parallel: true }
  - { name: ordered, tool: echo }
  - { name: chained, tool: echo, input_map: { x: $.reads.step } }
  - { name: own_when, tool: echo, input_map: { x: $.gate.step }, when: $.go == false }
  - { name: join, tool: echo, input_map: { a: $.gate.step, b: $.own_when.step }, when: "$.gate.step == 'gate' || $.own_when.step == 'own_when'" }
`;
  it.each([
    [false, { gate: 'skipped', reads: 'skipped', names: 'skipped', ordered: 'succeeded', chained: 'skipped', own_when: 'succeeded', join: 'succeeded' }],
    [true, { gate: 'succeeded', reads: 'succeeded', names: 'succeeded', ordered: 'succeeded', chained: 'succeeded', own_when: 'skipped', join: 'succeeded' }],
  ])('go = %s', async (go, expected) => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [CHAIN]);
    const log = eventLog();
    const result = await engine.run('skips', { go }, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    expect(Object.fromEntries(Object.entries(result.steps).map(([k, v]) => [k, v.status]))).toEqual(expected);
    const skipped = log.events.filter((e) => e.type === 'step:skipped');
    for (const e of skipped) expect(e.reason).toBe(e.step === 'gate' || e.step === 'own_when' ? 'when' : 'dependency');
  });

  it('without outputs, the result is the last step in the file that ran', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [`name: c\nsteps:\n  - { name: a, tool: echo }\n  - { name: b, tool: echo, when: 1 == 2 }\n`]);
    const result = await engine.run('c', {});
    expect(result.outputs).toEqual({ step: 'a' });
  });
});

describe('for_each', () => {
  it('runs once per element, at most max_concurrency at once, results in input order', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [{ name: 'list', handler: async () => ({ items: [50, 10, 40, 5, 30, 1, 20] }) }, rec.sleeper('nap')],
      [`name: c\nsteps:\n  - { name: list, tool: list }\n  - name: each\n    tool: nap\n    for_each: $.list.items\n    max_concurrency: 3\n    input_map: { ms: $.item, i: $.index }\n`],
    );
    const result = await engine.run('c', {});
    expect(result.status).toBe('succeeded');
    expect((result.outputs as { i: number; ms: number }[]).map((o) => [o.i, o.ms])).toEqual([
      [0, 50], [1, 10], [2, 40], [3, 5], [4, 30], [5, 1], [6, 20],
    ]);
    expect(rec.maxActive).toBe(3);
    expect(rec.calls).toHaveLength(7);
  });

  it('an empty list gives [] and a non-list fails the step', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('nap')],
      [`name: c\ninputs: { xs: { type: array, default: [] } }\nsteps:\n  - { name: each, tool: nap, for_each: $.xs, input_map: { v: $.item } }\n`],
    );
    expect((await engine.run('c', {})).outputs).toEqual([]);
    const bad = await engine.run('c', { xs: 'nope' });
    expect(bad.status).toBe('failed');
  });

  it('the first element to fail for good fails the step', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('nap')],
      [`name: c\ninputs: { xs: array }\nsteps:\n  - { name: each, tool: nap, for_each: $.xs, input_map: { fail: $.item } }\n`],
    );
    const result = await engine.run('c', { xs: [false, true, false] });
    expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'each', message: expect.stringMatching(/^item 1: /) });
  });

  it('with on_error: continue, a failed element holds { error } in its slot and the rest run', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('nap')],
      [`name: c\ninputs: { xs: array }\nsteps:\n  - { name: each, tool: nap, for_each: $.xs, on_error: continue, input_map: { fail: $.item, i: $.index } }\n`],
    );
    const result = await engine.run('c', { xs: [false, true, false] });
    expect(result.status).toBe('succeeded');
    const outputs = result.outputs as Record<string, unknown>[];
    expect(outputs).toHaveLength(3);
    expect(outputs[0]).toMatchObject({ i: 0 });
    expect(outputs[1]).toEqual({ error: { code: 'TOLD_TO_FAIL', message: expect.any(String) } });
    expect(outputs[2]).toMatchObject({ i: 2 });
    expect(rec.calls).toHaveLength(3);
  });
});

describe('sub-chains', () => {
  it('run through the same engine, with events nested under the parent run', async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('echo')],
      [
        `name: inner\ninputs: { who: string }\nsteps:\n  - { name: hello, tool: echo, input_map: { greeting: "hi {{ $.who }}" } }\noutputs: { text: $.hello.greeting }\n`,
        `name: outer\nsteps:\n  - { name: first, tool: echo, input_map: { who: world } }\n  - { name: sub, chain: inner, input_map: { who: $.first.who } }\noutputs: { said: $.sub.text }\n`,
      ],
    );
    const log = eventLog();
    const result = await engine.run('outer', {}, { onEvent: log.onEvent });
    expect(result.outputs).toEqual({ said: 'hi world' });
    const inner = log.events.filter((e) => e.chain === 'inner');
    expect(inner.map((e) => e.type)).toEqual(['run:started', 'step:started', 'step:succeeded', 'run:finished']);
    for (const e of inner) expect(e.parent).toEqual({ run_id: result.run_id, step: 'sub' });
    expect(inner[0]!.run_id).not.toBe(result.run_id);
    // The sub-run happens between the parent step's start and its success.
    const types = log.trace();
    expect(types.indexOf('step:started sub')).toBeLessThan(types.indexOf('step:started hello'));
    expect(types.indexOf('step:succeeded hello')).toBeLessThan(types.indexOf('step:succeeded sub'));
  });

  it("a sub-chain's bad input is the step's VALIDATION_FAILED, and its failure fails the step", async () => {
    const rec = createRecorder();
    const engine = await engineWith(
      [rec.sleeper('echo')],
      [
        `name: inner\ninputs: { n: integer }\nsteps:\n  - { name: x, tool: echo, input_map: { fail: $.n } }\n`,
        `name: outer\ninputs: { n: string }\nsteps:\n  - { name: sub, chain: inner, input_map: { n: $.n } }\n`,
      ],
    );
    const bad = await engine.run('outer', { n: 'abc' });
    expect(bad.error).toMatchObject({ code: 'VALIDATION_FAILED', step: 'sub' });
  });
});

describe('inputs and linking', () => {
  const CHAIN = `name: c\ninputs:\n  n: integer\n  flag: { type: boolean, default: false }\n  label: string\nsteps:\n  - { name: a, tool: echo, input_map: { n: $.n, flag: $.flag, label: $.label } }\n`;

  it('coerces strings to the declared types and fills defaults', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [CHAIN]);
    const result = await engine.run('c', { n: '5', label: 'x' });
    expect(result.outputs).toEqual({ n: 5, flag: false, label: 'x', step: 'a' });
  });

  it('a bad input is INPUT_INVALID naming each field, and no step runs', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [CHAIN]);
    const log = eventLog();
    const result = await engine.run('c', { n: 'five', extra: 1 }, { onEvent: log.onEvent });
    expect(result.error?.code).toBe('INPUT_INVALID');
    expect(result.error?.message).toMatch(/'n'/);
    expect(result.error?.message).toMatch(/label/);
    expect(result.error?.message).toMatch(/extra/);
    expect(rec.calls).toHaveLength(0);
    expect(log.trace()).toEqual(['run:started', 'run:finished']);
  });

  it('an unknown chain is CHAIN_NOT_FOUND with a did-you-mean', async () => {
    const engine = await engineWith([], [CHAIN]);
    const result = await engine.run('d', {});
    expect(result).toMatchObject({ status: 'failed', error: { code: 'CHAIN_NOT_FOUND' } });
    const close = await engine.run('cc', {});
    expect(close.error?.message).toContain("did you mean 'c'");
  });

  it('a missing tool fails the run with TOOL_NOT_FOUND; registering it later makes the chain run', async () => {
    const engine = await engineWith([], [CHAIN]);
    const missing = await engine.run('c', { n: 1, label: 'x' });
    expect(missing.error?.code).toBe('TOOL_NOT_FOUND');
    expect(missing.error?.message).toContain("'echo'");
    engine.registerTool(createRecorder().sleeper('echo'));
    expect((await engine.run('c', { n: 1, label: 'x' })).status).toBe('succeeded');
  });
});
