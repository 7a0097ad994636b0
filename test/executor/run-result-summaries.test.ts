import { describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { Clock } from '../../src/common/clock.js';

// A run whose every step succeeded at its first attempt, in the millisecond it started, has the
// same step summaries as every other such run of its chain: they are made once per chain, frozen
// and shared (run-result.ts). What must hold: the summaries say what happened in each run, a run
// that differs in any way gets its own, and nothing one run's caller does reaches another's.

const CHAIN = `
name: three
inputs: { n: integer }
steps:
  - { name: a, tool: inc, input_map: { n: $.n } }
  - { name: b, tool: inc, input_map: { n: $.a.n } }
  - { name: c, tool: inc, input_map: { n: $.b.n } }
`;

const quick = { status: 'succeeded', attempts: 1, duration_ms: 0, error: undefined };

/** An engine on a clock that only the tools move: `slow` makes `inc` take 5 ms, `flaky` makes its next call fail once. */
async function engine(): Promise<{ engine: Engine; tool: { slow: boolean; flaky: boolean } }> {
  let now = 1_000;
  const clock: Clock = { now: () => now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) };
  const tool = { slow: false, flaky: false };
  const e = await createEngine({ clock });
  e.registerTool({
    name: 'inc',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    handler: async (args: Record<string, unknown>) => {
      if (tool.slow) now += 5;
      if (tool.flaky) {
        tool.flaky = false;
        throw new Error('once');
      }
      return { n: (args.n as number) + 1 };
    },
  } as Parameters<Engine['registerTool']>[0]);
  e.addChain(CHAIN);
  e.addChain(CHAIN.replace('name: three', 'name: retried').replace('{ name: a, tool: inc,', '{ name: a, tool: inc, retry: { max_attempts: 2, backoff: { initial: 1ms } },'));
  return { engine: e, tool };
}

describe('step summaries of quick runs', () => {
  it('two quick runs of a chain report the same summaries, shared and frozen: a caller cannot change what the next run reports', async () => {
    const { engine: e } = await engine();
    const first = await e.run('three', { n: 1 });
    const second = await e.run('three', { n: 5 });
    expect(first.outputs).toEqual({ n: 4 });
    expect(second.outputs).toEqual({ n: 8 });
    expect(first.steps).toEqual({ a: quick, b: quick, c: quick });
    expect(second.steps).toBe(first.steps);
    expect(Object.isFrozen(first.steps) && Object.isFrozen(first.steps.a)).toBe(true);
    expect(() => {
      (first.steps.a as { attempts: number }).attempts = 9;
    }).toThrow(TypeError);
    expect((await e.run('three', { n: 1 })).steps.a!.attempts).toBe(1);
    await e.close();
  });

  it('a run with a step that took time, a retried step or a failed step gets summaries of its own, and the next quick run is quick again', async () => {
    const { engine: e, tool } = await engine();
    const shared = (await e.run('three', { n: 1 })).steps;

    tool.slow = true;
    const slow = await e.run('three', { n: 1 });
    tool.slow = false;
    expect(slow.steps).toEqual({ a: { ...quick, duration_ms: 5 }, b: { ...quick, duration_ms: 5 }, c: { ...quick, duration_ms: 5 } });
    expect(Object.isFrozen(slow.steps)).toBe(false);

    tool.flaky = true;
    const retried = await e.run('retried', { n: 1 });
    expect(retried.status).toBe('succeeded');
    expect(retried.steps).toEqual({ a: { ...quick, attempts: 2 }, b: quick, c: quick });

    tool.flaky = true;
    const failed = await e.run('three', { n: 1 });
    expect(failed.status).toBe('failed');
    expect(failed.steps.a).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'TOOL_ERROR' } });
    expect(failed.steps.b).toEqual({ status: 'pending', attempts: 0, duration_ms: 0, error: undefined });

    expect((await e.run('three', { n: 1 })).steps).toBe(shared);
    await e.close();
  });
});
