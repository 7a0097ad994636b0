import { describe, expect, it } from 'vitest';
import { compileCondition, createEngine, createRegistry } from '../../src/index.js';
import type { RunContext } from '../../src/expr/types.js';

// The example in docs/guide/chains.md `when: $.locate.country in ['JP','FR']` failed with
// BAD_EXPRESSION "unexpected character '['". The docs list list literals among `when`'s operands.

const test = (source: string, context: RunContext): boolean => {
  const { condition, problems } = compileCondition(source);
  expect(problems).toEqual([]);
  return condition!.test(context);
};

describe('list literals in when', () => {
  it("the README's example compiles and tests membership", () => {
    expect(test("$.locate.country in ['JP','FR']", { locate: { country: 'JP' } })).toBe(true);
    expect(test("$.locate.country in ['JP','FR']", { locate: { country: 'DE' } })).toBe(false);
  });

  it('holds numbers, booleans, null and nothing; compares with == deeply', () => {
    expect(test('$.n in [1, -2.5, 3e2]', { n: 300 })).toBe(true);
    expect(test('$.v in [true, null]', { v: null })).toBe(true);
    expect(test('$.v in []', { v: 1 })).toBe(false);
    expect(test("$.tags == ['a', 'b']", { tags: ['a', 'b'] })).toBe(true);
    expect(test("!($.c in ['x']) && $.c != 'y'", { c: 'z' })).toBe(true);
  });

  it('a malformed list is BAD_EXPRESSION with the column: a path inside, a missing comma, an unclosed bracket', () => {
    for (const [source, column] of [
      ["$.a in [$.b]", 8],
      ["$.a in ['x' 'y']", 12],
      ["$.a in ['x',", 12],
      ['$.a in [,]', 8],
    ] as const) {
      const { problems } = compileCondition(source);
      expect(problems[0]?.code, source).toBe('BAD_EXPRESSION');
      expect(problems[0]?.message, source).toContain(`at character ${column + 1} of the condition`);
    }
  });

  it('through the engine, a step whose when holds a list runs or is skipped by it', async () => {
    const registry = createRegistry();
    const engine = await createEngine({ chainsDir: '/nonexistent-chains', pluginsDir: '/nonexistent-plugins', registry });
    try {
      engine.registerTool({ name: 'echo', parameters: { type: 'object' }, handler: async (args) => args });
      engine.addChain(`name: gate
inputs: { country: string }
steps:
  - name: brief
    tool: echo
    when: $.country in ['JP', 'FR']
    input_map: { c: $.country }
`);
      expect((await engine.run('gate', { country: 'FR' })).steps.brief?.status).toBe('succeeded');
      expect((await engine.run('gate', { country: 'US' })).steps.brief?.status).toBe('skipped');
    } finally {
      await engine.close();
    }
  });
});
