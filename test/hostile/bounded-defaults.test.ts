import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/call/index.js';
import { compileChain, createEngine, type Engine, type RunEvent } from '../../src/index.js';

// Defaults that had no bound. A `for_each` over a million items started them
// all at once (3.2 GB); now elements start from a cursor, at most `max_concurrency`, else the
// chain's `concurrency`, else 16 at a time. Retries: at most 100 attempts, never less than 1 ms
// apart (a zero backoff is refused as a duration, but full jitter or `initial: 0.001ms` still
// made a busy loop).

describe('for_each is bounded by default', () => {
  let engine: Engine;
  let inFlight = 0;
  let peak = 0;
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({
      name: 'count',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      handler: async (args) => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return args.n;
      },
    });
    engine.registerTool({ name: 'range', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, handler: (args) => Array.from({ length: args.n as number }, (_, i) => i) });
  });
  afterAll(() => engine.close());

  const chain = (name: string, extra: { chain?: string; step?: string } = {}): string =>
    `name: ${name}\ninputs: { n: integer }\n${extra.chain ?? ''}steps:\n  - name: r\n    tool: range\n    input_map: { n: $.n }\n  - name: each\n    tool: count\n    for_each: $.r\n    input_map: { n: $.item }\n${extra.step ?? ''}outputs: { each: $.each }\n`;

  async function peakOf(name: string, n: number): Promise<number> {
    peak = 0;
    const result = await engine.run(name, { n });
    expect(result.status).toBe('succeeded');
    expect((result.outputs as { each: unknown[] }).each).toHaveLength(n);
    return peak;
  }

  it('without max_concurrency or a chain concurrency, 16 elements at most run at once (100,000 elements)', async () => {
    engine.addChain(chain('plain'));
    expect(await peakOf('plain', 100_000)).toBe(16);
  });

  it("the chain's concurrency is the default when it sets one; max_concurrency wins over both", async () => {
    engine.addChain(chain('by_chain', { chain: 'concurrency: 3\n' }));
    engine.addChain(chain('by_step', { chain: 'concurrency: 3\n', step: '    max_concurrency: 40\n' }));
    expect(await peakOf('by_chain', 200)).toBe(3);
    expect(await peakOf('by_step', 200)).toBe(40);
  });

  it('keeps results in input order', async () => {
    engine.addChain(chain('ordered'));
    const result = await engine.run('ordered', { n: 50 });
    expect(result.outputs).toEqual({ each: Array.from({ length: 50 }, (_, i) => i) });
  });
});

describe('retries are bounded', () => {
  it('max_attempts over 100 is refused at its value, like any number out of its range', () => {
    const { diagnostics } = compileChain('name: c\nsteps:\n  - name: s\n    tool: t\n    retry: { max_attempts: 1000000 }\n');
    expect(diagnostics.map((d) => [d.code, d.line, d.col, d.message])).toEqual([['SCHEMA_INVALID', 5, 28, "retry.max_attempts of step 's' must be <= 100"]]);
    expect(compileChain('name: c\nsteps:\n  - name: s\n    tool: t\n    retry: { max_attempts: 100 }\n').diagnostics).toEqual([]);
  });

  it('no wait between attempts is shorter than 1 ms, whatever the jitter picks or the initial delay says', async () => {
    const policy = { initialMs: 0.001, factor: 1, maxMs: 30_000, jitter: 'full' as const };
    expect([1, 2, 3].map((n) => backoffDelay(policy, n, () => 0))).toEqual([1, 1, 1]);
    expect(backoffDelay({ ...policy, jitter: 'none' }, 1, Math.random)).toBe(1);
    const engine = await createEngine({ cache: 'off', random: () => 0 });
    try {
      engine.registerTool({ name: 'fails', handler: () => Promise.reject(new Error('no')) });
      engine.addChain('name: busy\nsteps:\n  - name: s\n    tool: fails\n    retry: { max_attempts: 5, backoff: { initial: 0.001ms, jitter: full } }\n');
      const delays: number[] = [];
      const result = await engine.run('busy', {}, { onEvent: (e: RunEvent) => void (e.type === 'step:retrying' && delays.push(e.delay_ms)) });
      expect(result.steps.s?.attempts).toBe(5);
      expect(delays).toEqual([1, 1, 1, 1]);
    } finally {
      await engine.close();
    }
  });
});
