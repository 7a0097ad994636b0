import { describe, expect, it } from 'vitest';
import { compileChain, ToolchainError, type Engine } from '../../src/index.js';
import { engineWith } from '../fixtures/executor/setup.js';

// RFC 9535 JSONPath wherever a chain evaluates one: input_map and outputs values, templates,
// for_each, when operands and a sub-chain's input_map; results in the chain's shapes (one value,
// the key left out, or an array); compile-time refusals with their offsets.

const DATA = {
  items: [
    { id: 1, name: 'apple', price: 3, tags: ['fruit', 'red'], keep: true },
    { id: 2, name: 'bread', price: '3', tags: ['bakery'], keep: false, note: null },
    { id: 3, name: 'avocado', price: 12, tags: ['fruit'], keep: true },
  ],
  pick: 3,
};

const echo = { name: 'echo', handler: async (args: Record<string, unknown>) => args };
const source = { name: 'source', handler: async () => DATA };

async function engine(...chains: string[]): Promise<Engine> {
  return engineWith([echo, source], chains);
}

function diagnosticsOf(text: string) {
  return compileChain(text, { file: 'c.yaml' }).diagnostics.map((d) => ({ code: d.code, pointer: d.pointer, offset: d.offset, line: d.line }));
}

describe('JSONPath in chains', () => {
  it('input_map: strict comparison, functions, Nothing left out, null kept, $$ literal', async () => {
    const e = await engine(`
name: c
steps:
  - { name: s, tool: source }
  - name: e
    tool: echo
    input_map:
      threes: "$.s.items[?@.price == 3].name"
      fruit: "$.s.items[?match(@.tags[0], 'fr.*') && length(@.name) > 5].id"
      picked: "$.s.items[?@.id == $.s.pick].name"
      last: $.s.items[-1].id
      note: $.s.items[1].note
      missing: $.s.items[0].note
      count: $.s.items.length
      none: "$.s.items[?@.price > 100]"
      money: $$5.00
`);
    const result = await e.run('c', {});
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({
      threes: ['apple'], // '3' is a string: not equal to 3
      fruit: [3],
      picked: ['avocado'],
      last: 3,
      note: null, // a member that holds null is a value
      none: [],
      money: '$5.00',
    });
    // `missing` (no such member) and `count` (arrays have no member named length) were left out.
    await e.close();
  });

  it('for_each, when, templates and outputs read RFC paths', async () => {
    const e = await engine(`
name: c
steps:
  - { name: s, tool: source }
  - name: each
    tool: echo
    for_each: "$.s.items[?@.keep == true]"
    input_map: { name: $.item.name, at: $.index }
  - name: only_if
    tool: echo
    when: "$.s.items[?@.price > 10] != [] && $.s.items[0].tags [1] == 'red'"
    input_map: { text: "cheap: {{ $.s.items[?@.price < 5].name }}" }
  - name: never
    tool: echo
    when: "$.s.items[0].note == null && $.s.items[?@.note == null] == []"
    input_map: { x: 1 }
outputs:
  names: $.each[*].name
  text: $.only_if.text
  skipped: $.never
`);
    const result = await e.run('c', {});
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ names: ['apple', 'avocado'], text: 'cheap: ["apple"]' });
    // In a filter a missing member is not null; in `when` (its own language) missing equals null,
    // and the filter selected bread (note: null), so the second operand is false.
    expect(result.steps.never?.status).toBe('skipped');
    await e.close();
  });

  it("a sub-chain's input_map reads RFC paths", async () => {
    const e = await engine(
      `
name: sub
inputs: { names: array }
steps:
  - { name: e, tool: echo, input_map: { got: $.names } }
outputs: { got: $.e.got }
`,
      `
name: main
steps:
  - { name: s, tool: source }
  - name: call
    chain: sub
    input_map: { names: "$.s.items[?search(@.name, '^a')].name" }
outputs: { got: $.call.got }
`,
    );
    const result = await e.run('main', {});
    expect(result.outputs).toEqual({ got: ['apple', 'avocado'] });
    await e.close();
  });

  it('an absolute query inside a filter makes the step wait for the step it names', async () => {
    const order: string[] = [];
    const a = {
      name: 'slow',
      handler: async () => {
        order.push('a started');
        await new Promise((resolve) => setImmediate(resolve));
        order.push('a finished');
        return { id: 2 };
      },
    };
    const b = { name: 'record', handler: async (args: Record<string, unknown>) => (order.push('b started'), args) };
    const e = await engineWith(
      [a, b, source],
      [
        `
name: c
steps:
  - { name: s, tool: source }
  - { name: a, tool: slow, parallel: true, depends_on: [s] }
  - name: b
    tool: record
    parallel: true
    depends_on: [s]
    input_map: { which: "$.s.items[?@.id == $.a.id].name" }
`,
      ],
    );
    const result = await e.run('c', {});
    expect(result.outputs).toEqual({ which: ['bread'] });
    expect(order).toEqual(['a started', 'a finished', 'b started']);
    await e.close();
  });

  it('refuses bad paths at compile time with the offset in the string, wherever they are', () => {
    // Offsets: the unclosed '[' at the end (16), the unclosed '{{' (4), '=~' (22), '===' (12), '1' (4).
    const text = `
name: c
steps:
  - name: s
    tool: t
    for_each: "$.list[?@.a === 1]"
    when: "$.x == 1 && $.y[?(@.b =~ 'x')]"
    input_map:
      a: "$.list[?@.a == 1"
      b: "n = {{ $.list[0 }}"
outputs:
  o: "$.s.1"
`;
    expect(diagnosticsOf(text)).toEqual([
      { code: 'BAD_JSONPATH', pointer: '/steps/0/input_map/a', offset: 16, line: 9 },
      { code: 'BAD_TEMPLATE', pointer: '/steps/0/input_map/b', offset: 4, line: 10 },
      { code: 'BAD_EXPRESSION', pointer: '/steps/0/when', offset: 22, line: 7 },
      { code: 'BAD_JSONPATH', pointer: '/steps/0/for_each', offset: 12, line: 6 },
      { code: 'BAD_JSONPATH', pointer: '/outputs/o', offset: 4, line: 12 },
    ]);
  });

  it('a filter that names an unknown step or input is an unknown reference', () => {
    const found = diagnosticsOf('name: c\nsteps:\n  - name: s\n    tool: t\n    input_map: { a: "$.s2[?@ == $.nope]" }\n');
    expect(found.map((d) => d.code)).toEqual(['UNKNOWN_REFERENCE', 'UNKNOWN_REFERENCE']);
  });

  it('runs match() and search() in linear time: a pattern that stalls a backtracking engine finishes', async () => {
    // (a+)+b against a run of a's with no b takes a backtracking engine 2^n steps; RE2 does not.
    const long = `${'a'.repeat(30_000)}c`;
    const e = await engineWith(
      [echo, { name: 'hostile', handler: async () => ({ texts: [long, 'aab'], pattern: '(a|aa)+$' }) }],
      [
        `
name: c
steps:
  - { name: h, tool: hostile }
  - name: e
    tool: echo
    input_map:
      literal: "$.h.texts[?match(@, '(a+)+b')]"
      dynamic: "$.h.texts[?search(@, $.h.pattern)]"
`,
      ],
    );
    const result = await e.run('c', {});
    expect(result.status).toBe('succeeded');
    const outputs = result.outputs as { literal: string[]; dynamic: string[] };
    expect(outputs.literal).toEqual(['aab']);
    expect(outputs.dynamic).toEqual([]);
    await e.close();
  });

  it('stops a path whose work grows faster than the document, failing the step instead of the engine', async () => {
    // $..*..* visits every node below every node: for 30,000 numbers at the bottom of a list nested
    // 500 deep, each of the 500 levels visits the 30,000 again: 15 million visits.
    let deep: unknown = Array.from({ length: 30_000 }, (_, i) => i);
    for (let i = 0; i < 500; i++) deep = [deep];
    const e = await engineWith(
      [echo, { name: 'deep', handler: async () => ({ deep }) }],
      ['name: c\nsteps:\n  - { name: d, tool: deep }\n  - { name: e, tool: echo, input_map: { all: "$.d..*..*", fine: "$.d..*" } }\n'],
    );
    const result = await e.run('c', {});
    expect(result.error).toMatchObject({ code: 'VALIDATION_FAILED', step: 'e' });
    expect(result.error?.message).toContain('more than 10,000,000 steps of work');
    await e.close();
  });

  it('refuses a path nested past the limit instead of overflowing the stack', () => {
    const deep = `$.a[?${'('.repeat(10_000)}@.x${')'.repeat(10_000)}]`;
    const text = `name: c\nsteps:\n  - { name: s, tool: t, input_map: { a: "${deep}" } }\n`;
    const found = compileChain(text, { file: 'c.yaml' }).diagnostics;
    expect(found.map((d) => d.code)).toEqual(['BAD_JSONPATH']);
    expect(found[0]!.message).toContain('nests too deeply');
  });

  it('names the path when a tool needs a value it matched nothing for, with a word on .length', async () => {
    const needs = { name: 'needs', parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, handler: async () => ({}) };
    const e = await engineWith([needs, source], ['name: c\nsteps:\n  - { name: s, tool: source }\n  - { name: e, tool: needs, input_map: { n: $.s.items.length } }\n']);
    const result = await e.run('c', {});
    expect(result.error?.code).toBe('VALIDATION_FAILED');
    expect(result.error?.message).toContain("key 'n' from $.s.items.length matched nothing: in JSONPath '.length' selects a member named length");
    await e.close();
  });

  it('refuses a JavaScript method call in a filter, naming the RFC function to use', async () => {
    const e = await engine();
    let error: unknown;
    try {
      e.addChain('name: c\nsteps:\n  - { name: s, tool: echo, input_map: { a: "$.x[?(@.a == 1 && @.b.match(/x/))]" } }\n');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ToolchainError);
    expect((error as ToolchainError).diagnostics[0]).toMatchObject({ code: 'BAD_JSONPATH', offset: 27 });
    expect((error as ToolchainError).message).toContain("match(@.name, 'a.*')");
    await e.close();
  });
});
