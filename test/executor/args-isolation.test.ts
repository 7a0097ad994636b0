import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';

// A handler owns the arguments it gets: changing them in place changes nothing a step's output,
// the run's input or the next run holds. Arguments resolved from an input_map are validated in
// place (they are made for the call); what they hold of the run context is copied, and a constant
// input_map (one frozen object for every run) is copied whole.

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

describe('arguments a handler changes in place', () => {
  it('do not change the outputs they were read from, for a step or a for_each element', async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'make', handler: () => ({ obj: { x: 1 }, list: [1, 2], items: [{ v: 1 }, { v: 2 }] }) });
    engine.registerTool({
      name: 'spoil',
      parameters: { type: 'object', properties: { o: { type: 'object' }, l: { type: 'array' }, n: { type: 'integer', default: 4 } } },
      handler: (args) => {
        (args.o as { x: number }).x = 99;
        (args.l as number[]).push(3);
        args.n = 7;
        return { n: args.n };
      },
    });
    engine.registerTool({ name: 'spoil_item', handler: (args) => ((args.item as { v: number }).v = 0) });
    engine.registerTool({ name: 'see', handler: (args) => args });
    engine.addChain(`name: iso
steps:
  - name: a
    tool: make
  - name: b
    tool: spoil
    input_map: { o: $.a.obj, l: $.a.list }
  - name: each
    tool: spoil_item
    for_each: $.a.items
    input_map: { item: $.item }
  - name: c
    tool: see
    depends_on: [b, each]
    input_map: { x: $.a.obj.x, l: $.a.list, items: $.a.items }
`);
    const result = await engine.run('iso');
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ x: 1, l: [1, 2], items: [{ v: 1 }, { v: 2 }] });
  });

  it('of a constant input_map are a copy: every run starts from the same values, defaults filled', async () => {
    engine = await createEngine({ cache: 'off' });
    const seen: unknown[] = [];
    engine.registerTool({
      name: 'spoil',
      parameters: { type: 'object', properties: { n: { type: 'integer' }, d: { type: 'integer', default: 4 } }, additionalProperties: false },
      handler: (args) => {
        seen.push({ ...args });
        args.n = 99;
        return 1;
      },
    });
    engine.addChain('name: const\nsteps:\n  - name: s\n    tool: spoil\n    input_map: { n: 1 }\n');
    engine.addChain('name: fresh\ninputs: { x: integer }\nsteps:\n  - name: s\n    tool: spoil\n    input_map: { n: $.x }\n');
    for (let i = 0; i < 2; i++) expect((await engine.run('const')).status).toBe('succeeded');
    const input = { x: 5 };
    expect((await engine.run('fresh', input)).status).toBe('succeeded');
    expect(seen).toEqual([{ n: 1, d: 4 }, { n: 1, d: 4 }, { n: 5, d: 4 }]);
    expect(input).toEqual({ x: 5 });
  });
});
