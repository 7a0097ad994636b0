import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRecorder } from '../fixtures/executor/tools.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';

// Order, overlap and limits: real time where concurrency is the point, with tolerances.

const LINEAR = `name: linear
steps:
  - { name: a, tool: echo }
  - { name: b, tool: echo, input_map: { x: $.a.step } }
  - { name: c, tool: echo, input_map: { x: $.b.step } }
`;
const DIAMOND = `name: diamond
steps:
  - { name: a, tool: echo }
  - { name: b, tool: echo, parallel: true, input_map: { x: $.a.step } }
  - { name: c, tool: echo, parallel: true, input_map: { x: $.a.step } }
  - { name: d, tool: echo, parallel: true, input_map: { x: $.a.step } }
  - { name: e, tool: echo, input_map: { v: [$.b.step, $.c.step, $.d.step] } }
outputs: { v: $.e.v }
`;
function fanout(n: number, tool = 'echo', extra = ''): string {
  let s = `name: fan${n}\n${extra}steps:\n  - { name: root, tool: ${tool} }\n`;
  for (let i = 0; i < n; i++) s += `  - { name: p${i}, tool: ${tool}, parallel: true, input_map: { x: $.root.step } }\n`;
  return `${s}  - name: join\n    tool: echo\n    input_map: { n: ${n} }\n    depends_on: [${Array.from({ length: n }, (_, i) => `p${i}`).join(', ')}]\n`;
}

describe('event order', () => {
  it('linear: each step starts after the previous one succeeded', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [LINEAR]);
    const log = eventLog();
    const result = await engine.run('linear', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    expect(log.trace()).toEqual([
      'run:started',
      'step:started a', 'step:succeeded a',
      'step:started b', 'step:succeeded b',
      'step:started c', 'step:succeeded c',
      'run:finished',
    ]);
    expect(result.outputs).toEqual({ x: 'b', step: 'c' });
    for (const e of log.events) expect(e.run_id).toBe(result.run_id);
  });

  it('diamond: b, c, d start together after a; e after all three', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [DIAMOND]);
    const log = eventLog();
    const result = await engine.run('diamond', {}, { onEvent: log.onEvent });
    expect(result.outputs).toEqual({ v: ['b', 'c', 'd'] });
    expect(log.trace()).toEqual([
      'run:started',
      'step:started a', 'step:succeeded a',
      'step:started b', 'step:started c', 'step:started d',
      'step:succeeded b', 'step:succeeded c', 'step:succeeded d',
      'step:started e', 'step:succeeded e',
      'run:finished',
    ]);
  });

  it('fan-out: every branch starts before any finishes, and the join comes last', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo')], [fanout(20)]);
    const log = eventLog();
    await engine.run('fan20', {}, { onEvent: log.onEvent });
    const trace = log.trace();
    const starts = trace.filter((t) => /^step:started p/.test(t));
    expect(starts).toEqual(Array.from({ length: 20 }, (_, i) => `step:started p${i}`));
    const lastStart = trace.lastIndexOf('step:started p19');
    const firstDone = trace.findIndex((t) => /^step:succeeded p/.test(t));
    expect(lastStart).toBeLessThan(firstDone);
    expect(trace.slice(-3)).toEqual(['step:started join', 'step:succeeded join', 'run:finished']);
  });

  it('events carry timestamps, attempts and durations', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo', 20)], [LINEAR]);
    const log = eventLog();
    await engine.run('linear', {}, { onEvent: log.onEvent });
    const done = log.events.filter((e) => e.type === 'step:succeeded');
    for (const e of done) {
      expect(e.attempt).toBe(1);
      expect(e.attempts).toBe(1);
      expect(e.duration_ms).toBeGreaterThanOrEqual(15);
      expect(e.timestamp).toBeGreaterThanOrEqual(e.started_at);
    }
    const ts = log.events.map((e) => e.timestamp);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
  });
});

describe('overlap and sequence (real time)', () => {
  it('parallel steps overlap; ordinary steps run strictly one after another', async () => {
    const rec = createRecorder();
    const chain = `name: mixed
steps:
  - { name: a, tool: nap }
  - { name: b, tool: nap, parallel: true }
  - { name: c, tool: nap }
  - { name: d, tool: nap }
`;
    const engine = await engineWith([rec.sleeper('nap', 40)], [chain]);
    await engine.run('mixed', {});
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((s) => rec.callOf(s));
    // a and b overlap (b waits for nothing)
    expect(b!.start).toBeLessThan(a!.end!);
    // c waits for a and b (order), d for c
    expect(c!.start).toBeGreaterThanOrEqual(Math.max(a!.end!, b!.end!));
    expect(d!.start).toBeGreaterThanOrEqual(c!.end!);
  });

  it('eight parallel 30 ms steps all run at once', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo', 30)], [fanout(8)]);
    await engine.run('fan8', {});
    expect(rec.maxActive).toBe(8);
  });
});

describe('concurrency bound', () => {
  it("the chain's concurrency caps steps at once", async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo', 15)], [fanout(12, 'echo', 'concurrency: 3\n')]);
    const result = await engine.run('fan12', {});
    expect(result.status).toBe('succeeded');
    expect(rec.maxActive).toBe(3);
  });

  it('the call option and the engine limit cap it too; the least wins', async () => {
    const rec = createRecorder();
    const engine = await engineWith([rec.sleeper('echo', 15)], [fanout(12)]);
    await engine.run('fan12', {}, { concurrency: 2 });
    expect(rec.maxActive).toBe(2);

    const rec2 = createRecorder();
    const limited = await engineWith([rec2.sleeper('echo', 15)], [fanout(12)], { concurrency: 4 });
    // Three runs at once share the engine's four slots.
    const results = await Promise.all([limited.run('fan12', {}), limited.run('fan12', {}), limited.run('fan12', {})]);
    expect(results.every((r) => r.status === 'succeeded')).toBe(true);
    expect(rec2.maxActive).toBe(4);
  });

  it('rejects a bad concurrency option with its name', async () => {
    const engine = await engineWith([], []);
    await expect(engine.run('x', {}, { concurrency: 0 })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining("'concurrency'") });
  });
});

describe('property: any DAG runs in an order that respects every edge', () => {
  it('random chains', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: 30 }),
            fc.array(fc.boolean(), { minLength: n, maxLength: n }),
            fc.integer({ min: 1, max: 4 }),
          ),
        ),
        async ([n, pairs, parallel, limit]) => {
          // Edges only go forward (from a lower to a higher index) so the graph is acyclic.
          const deps = Array.from({ length: n }, () => new Set<number>());
          for (const [x, y] of pairs) if (x !== y) deps[Math.max(x, y)]!.add(Math.min(x, y));
          let yaml = `name: dag\nconcurrency: ${limit}\nsteps:\n`;
          for (let i = 0; i < n; i++) {
            const refs = [...deps[i]!];
            yaml += `  - name: s${i}\n    tool: rnd\n    parallel: ${parallel[i]}\n`;
            if (refs.length) yaml += `    input_map: { v: [${refs.map((r) => `$.s${r}.step`).join(', ')}] }\n`;
          }
          const order: { step: string; start: number; end: number }[] = [];
          let clock = 0;
          let active = 0;
          let maxActive = 0;
          const engine = await engineWith(
            [
              {
                name: 'rnd',
                handler: async (_args, ctx) => {
                  const rec = { step: ctx.step, start: ++clock, end: 0 };
                  active++;
                  maxActive = Math.max(maxActive, active);
                  for (let k = Math.floor(Math.random() * 3); k > 0; k--) await new Promise((r) => setImmediate(r));
                  active--;
                  rec.end = ++clock;
                  order.push(rec);
                  return {};
                },
              },
            ],
            [yaml],
          );
          const result = await engine.run('dag', {});
          expect(result.status).toBe('succeeded');
          expect(order).toHaveLength(n);
          expect(maxActive).toBeLessThanOrEqual(limit);
          const byName = new Map(order.map((o) => [o.step, o]));
          const plan = engine.chain('dag')!;
          for (const step of plan.steps) {
            for (const w of step.waitsFor) expect(byName.get(`s${w}`)!.end).toBeLessThan(byName.get(step.name)!.start);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
