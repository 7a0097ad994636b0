import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';

// A `when` reading `$.item` on a
// `for_each` step compiled but was evaluated once for the whole step, so every element ran. Now
// such a `when` is evaluated per element, and a false element yields null in its
// slot, like a skip; a `when` that does not read the element still decides for the whole step.

describe('when on a for_each step', () => {
  let engine: Engine;
  const called: unknown[] = [];
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'list', handler: () => [1, 2, 3, 4] });
    engine.registerTool({
      name: 'double',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      handler: (args) => {
        called.push(args.n);
        return (args.n as number) * 2;
      },
    });
    const chain = (name: string, when: string, extra = ''): string =>
      `name: ${name}\ninputs: { threshold: { type: integer, default: 2 }, go: { type: boolean, default: true } }\nsteps:\n  - name: l\n    tool: list\n  - name: d\n    tool: double\n    for_each: $.l\n    when: "${when}"\n    input_map: { n: $.item }\n${extra}outputs: { d: $.d }\n`;
    engine.addChain(chain('by_item', '$.item > 2'));
    engine.addChain(chain('by_index', '$.index != 1'));
    engine.addChain(chain('by_both', '$.item > $.threshold && $.go'));
    engine.addChain(chain('whole', '$.go'));
  });
  afterAll(() => engine.close());

  async function run(chain: string, input: Record<string, unknown> = {}) {
    called.length = 0;
    return engine.run(chain, input);
  }

  it('a when reading $.item runs only the elements it lets through; the others are null in their slots', async () => {
    const result = await run('by_item');
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ d: [null, null, 6, 8] });
    expect(called).toEqual([3, 4]);
    expect(result.steps.d?.status).toBe('succeeded');
  });

  it('a when reading $.index decides per element too', async () => {
    expect((await run('by_index')).outputs).toEqual({ d: [2, null, 6, 8] });
    expect(called).toEqual([1, 3, 4]);
  });

  it('a when reading the element and the run context decides per element, with the context it reads', async () => {
    expect((await run('by_both', { threshold: 3 })).outputs).toEqual({ d: [null, null, null, 8] });
    expect((await run('by_both', { go: false })).outputs).toEqual({ d: [null, null, null, null] });
    expect(called).toEqual([]);
  });

  it('a when that does not read the element still decides for the whole step', async () => {
    const off = await run('whole', { go: false });
    expect(off.steps.d?.status).toBe('skipped');
    expect(called).toEqual([]);
    expect((await run('whole')).outputs).toEqual({ d: [2, 4, 6, 8] });
  });

  it('every element false: every slot null, the step still succeeds', async () => {
    expect((await run('by_both', { threshold: 10 })).outputs).toEqual({ d: [null, null, null, null] });
  });
});
