import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.js';
import { compileChain, createCompileCache } from '../../src/index.js';
import { hashText } from '../../src/compiler/compile-chain.js';
import { createBinder, createInputChecker, executeChain, type ExecutorHost } from '../../src/executor/index.js';
import { createRegistry } from '../../src/registry/index.js';

// No walk over a chain's length may recurse (graphlib's recursive topsort overflowed the
// stack past ~3,700 steps in a row). These chains are far beyond that, in flow style to keep the
// text (and the YAML parse) small.

const MAX_BYTES = 64 * 1024 * 1024;

function linear(n: number): string {
  const lines = ['name: deep', 'inputs: { n: integer }', 'steps:'];
  for (let i = 0; i < n; i++) lines.push(`  - { name: s${i}, tool: inc, input_map: { n: ${i ? `$.s${i - 1}.n` : '$.n'} } }`);
  lines.push(`outputs: { n: $.s${n - 1}.n }`);
  return `${lines.join('\n')}\n`;
}

describe('chains of 100,000 steps', () => {
  it('compiles a 100,000-step chain in a row, and runs it to the right result', async () => {
    const n = 100_000;
    const text = linear(n);
    const { plan, diagnostics } = compileChain(text, { maxBytes: MAX_BYTES });
    expect(diagnostics).toEqual([]);
    expect(plan!.steps).toHaveLength(n);
    expect(plan!.roots).toEqual([0]);
    expect(plan!.order[n - 1]).toBe(n - 1);
    expect(plan!.steps[n - 1]!.waitsFor).toEqual([n - 2]);
    expect(plan!.steps[0]!.dependents).toEqual([1]);

    const registry = createRegistry();
    registry.register({ name: 'inc', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, handler: (args) => ({ n: (args.n as number) + 1 }) });
    const host: ExecutorHost = {
      clock: systemClock,
      random: Math.random,
      slots: undefined,
      newRunId: () => 'deep-1',
      chain: () => undefined,
      log: () => undefined,
      binder: createBinder(),
      checkInput: createInputChecker((schema) => registry.schemas.compile(schema, 'arguments').validate),
    };
    const result = await executeChain(host, plan!, registry.current(), { n: 0 });
    expect(result.error).toBeUndefined();
    expect(result.outputs).toEqual({ n: n });
  }, 120_000);

  it('compiles a 100,000-wide fan-out with its join, the join waiting for every branch', () => {
    const n = 100_000;
    const lines = ['name: wide', 'inputs: { n: integer }', 'steps:', '  - { name: root, tool: inc, input_map: { n: $.n } }'];
    for (let i = 0; i < n; i++) lines.push(`  - { name: p${i}, tool: inc, parallel: true, input_map: { n: $.root.n } }`);
    lines.push('  - { name: join, tool: inc, input_map: { n: $.root.n } }');
    const { plan, diagnostics } = compileChain(`${lines.join('\n')}\n`, { maxBytes: MAX_BYTES });
    expect(diagnostics).toEqual([]);
    const join = plan!.steps[n + 1]!;
    // root → join is implied by root → p_i → join, and it is a reference: kept, as it carries skips.
    expect(join.waitsFor).toHaveLength(n + 1);
    expect(plan!.steps[0]!.dependents).toHaveLength(n + 1);
    expect(plan!.order[0]).toBe(0);
    expect(plan!.order[n + 1]).toBe(n + 1);
  }, 120_000);

  it('names a cycle through 20,000 steps without overflowing', () => {
    const n = 20_000;
    const lines = ['name: loop', 'steps:'];
    for (let i = 0; i < n; i++) lines.push(`  - { name: s${i}, tool: inc, parallel: true, depends_on: [s${(i + 1) % n}] }`);
    const { plan, diagnostics } = compileChain(`${lines.join('\n')}\n`, { maxBytes: MAX_BYTES });
    expect(plan).toBeUndefined();
    expect(diagnostics.map((d) => d.code)).toEqual(['CHAIN_CYCLE']);
    const message = diagnostics[0]!.message;
    // s_i depends on s_i+1: the cycle runs downwards from s0, through every step, back to s0.
    expect(message.startsWith('steps form a cycle: s0 → s19999 → s19998')).toBe(true);
    expect(message.endsWith('s2 → s1 → s0')).toBe(true);
  }, 60_000);

  it('an order edge implied by a longer path is dropped, in a long chain as in a short one', () => {
    // c waits for a by order, but also for b, which waits for a: a → c is implied.
    const { plan } = compileChain('name: x\nsteps:\n  - { name: a, tool: t }\n  - { name: b, tool: t, parallel: true, depends_on: [a] }\n  - { name: c, tool: t }\n');
    expect(plan!.steps[2]!.waitsFor).toEqual([1]);
  });

  it('a cache hit with the hash taken when the file was read is one look-up, whatever the length', () => {
    const cache = createCompileCache();
    const text = linear(2_000);
    const hash = hashText(text);
    const first = compileChain(text, { cache, hash });
    // A different string of the same length: found by its hash alone.
    expect(compileChain(Buffer.from(text).toString('utf8'), { cache, hash }).plan).toBe(first.plan);
  });
});
