import { describe, expect, it } from 'vitest';
import { compileChain, createEngine } from '../../src/index.js';

// A step named `__proto__` vanished from `result.steps` (assigning it to a
// plain object set the object's prototype instead). Names that reach JavaScript's object
// machinery are now refused where the chain is compiled, with the step's position.

describe('reserved step and chain names', () => {
  it.each(['__proto__', 'constructor', 'prototype'])("a step named '%s' is BAD_NAME at its name", (name) => {
    const { plan, diagnostics } = compileChain(`name: c\nsteps:\n  - name: ok\n    tool: t\n  - name: ${name}\n    tool: t\n`);
    expect(plan).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.line, d.col, d.message])).toEqual([
      ['BAD_NAME', 5, 11, `step name '${name}' is reserved (it names JavaScript's object machinery); rename the step`],
    ]);
  });

  it('a chain named __proto__ is BAD_NAME too', () => {
    expect(compileChain('name: __proto__\nsteps:\n  - name: s\n    tool: t\n').diagnostics.map((d) => [d.code, d.line, d.col])).toEqual([['BAD_NAME', 1, 7]]);
  });

  it('every step of a run is in result.steps, under its own name', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      engine.registerTool({ name: 't', handler: () => 1 });
      engine.addChain('name: many\nsteps:\n  - name: proto__\n    tool: t\n  - name: __proto\n    tool: t\n  - name: valueOf_\n    tool: t\n');
      const result = await engine.run('many');
      expect(Object.keys(result.steps)).toEqual(['proto__', '__proto', 'valueOf_']);
      expect(() => engine.addChain('name: bad\nsteps:\n  - name: __proto__\n    tool: t\n')).toThrow(expect.objectContaining({ code: 'BAD_NAME' }));
    } finally {
      await engine.close();
    }
  });

  it('a run input with an own __proto__ key (as JSON.parse makes one) is refused by name and pollutes nothing', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      let calls = 0;
      engine.registerTool({ name: 'see', handler: () => ++calls });
      engine.addChain('name: p\ninputs: { x: integer }\nsteps:\n  - name: s\n    tool: see\n    input_map: { x: $.x }\n');
      const result = await engine.run('p', JSON.parse('{"__proto__": {"polluted": "yes"}, "x": 1}'));
      expect(result.error).toEqual({ code: 'INPUT_INVALID', message: "invalid input for chain 'p': unknown property '__proto__'; allowed properties: x" });
      expect(calls).toBe(0);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((await engine.run('p', { x: 1 })).status).toBe('succeeded');
    } finally {
      await engine.close();
    }
  });
});
