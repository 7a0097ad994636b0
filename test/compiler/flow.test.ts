import { describe, expect, it } from 'vitest';
import { compileChain, compileChainSet, createEngine, type NameCatalogue } from '../../src/index.js';
import { inferOutputs, chainSignatures } from '../../src/compiler/index.js';
import { FIXTURE_SIGNATURES, FIXTURE_TOOLS } from '../helpers/bad-fixtures.js';

// The data flow of a chain checked against its tools' schemas (the fixtures of
// test/fixtures/bad/flow-*.yaml cover one error each; these cover warnings, sub-chains, for_each
// items and the inferred outputs).

const tools: NameCatalogue = { has: (n) => FIXTURE_TOOLS.includes(n), names: () => FIXTURE_TOOLS, signature: (n) => FIXTURE_SIGNATURES[n] };

function problems(text: string) {
  return compileChain(text, { file: 'c.yaml', tools }).diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.col}`);
}

describe('the data-flow check', () => {
  it('accepts a chain whose data fits', () => {
    const text = `name: ok
inputs: { question: string }
steps:
  - name: locate
    tool: find_city
    input_map: { text: $.question }
  - name: clock
    tool: local_time
    input_map: { timezone: $.locate.timezone, hour12: true }
  - name: brief
    tool: render_template
    input_map: { template: "{{ $.locate.city }} {{ $.clock.time }}", values: { city: $.locate.city } }
`;
    const { plan, diagnostics } = compileChain(text, { file: 'c.yaml', tools });
    expect(diagnostics).toEqual([]);
    expect(plan).toBeDefined();
  });

  it('warns, without failing, where the registry converts: a number into text', () => {
    const text = `name: coerce
steps:
  - name: locate
    tool: find_city
    input_map: { text: "Osaka" }
  - name: facts
    tool: city_facts
    input_map:
      city: $.locate.lat
      country: 81
`;
    const { plan, diagnostics } = compileChain(text, { file: 'c.yaml', tools });
    expect(diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.col}`)).toEqual(['warning TYPE_MISMATCH 9:7', 'warning TYPE_MISMATCH 10:7']);
    expect(plan).toBeDefined();
  });

  it('reads text that spells a number or a boolean as that value, and refuses an enum value not listed', () => {
    expect(problems(`name: t
steps:
  - name: a
    tool: word_stats
    input_map: { text: hi, top: "5" }
  - name: b
    tool: json_query
    input_map: { value: 1, path: $$.x, aggregate: summ }
`)).toEqual(['error TYPE_MISMATCH 8:40']);
  });

  it('types $.item from the for_each array and checks the fields read from it', () => {
    const signatures = { ...FIXTURE_SIGNATURES, list: { returns: { type: 'object', properties: { cities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } } } } };
    const own: NameCatalogue = { has: (n) => n in signatures, names: () => Object.keys(signatures), signature: (n) => signatures[n as keyof typeof signatures] };
    const text = `name: each
steps:
  - name: all
    tool: list
  - name: facts
    tool: city_facts
    for_each: $.all.cities
    input_map: { city: $.item.nam }
`;
    const { diagnostics } = compileChain(text, { file: 'c.yaml', tools: own });
    expect(diagnostics.map((d) => [d.code, d.line, d.col, d.suggestion])).toEqual([['UNKNOWN_FIELD', 8, 18, 'name']]);
  });

  it('checks a sub-chain step against the sub-chain inputs, and reads its inferred outputs', () => {
    const inner = `name: inner
inputs: { question: string }
steps:
  - name: locate
    tool: find_city
    input_map: { text: $.question }
outputs: { city: $.locate.city, note: fixed }
`;
    const outer = `name: outer
steps:
  - name: first
    chain: inner
    input_map: { questoin: "Osaka?" }
  - name: facts
    tool: city_facts
    input_map: { city: $.first.town }
`;
    const set = compileChainSet([{ file: 'inner.yaml', text: inner }, { file: 'outer.yaml', text: outer }], tools);
    expect(set.diagnostics.map((d) => [d.file, d.code, d.line, d.col, d.suggestion])).toEqual([
      ['outer.yaml', 'UNKNOWN_PARAMETER', 5, 18, 'question'],
      ['outer.yaml', 'MISSING_PARAMETER', 5, 5, undefined],
      ['outer.yaml', 'UNKNOWN_FIELD', 8, 18, undefined],
    ]);
    expect(set.plans.has('inner')).toBe(true);
    expect(set.plans.has('outer')).toBe(false);
    const signatures = chainSignatures(new Map(set.files.map((f) => [f.name!, f])), (n) => FIXTURE_SIGNATURES[n]);
    expect(inferOutputs(set.plans.get('inner')!.flow, signatures)).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, note: { type: 'string' } },
      required: ['note'],
    });
  });

  it('uses the returns of tools registered from code (a ToolSet is a catalogue with schemas)', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      engine.registerTool({
        name: 'weigh',
        parameters: { type: 'object', properties: { kg: { type: 'number' } }, required: ['kg'], additionalProperties: false },
        returns: { type: 'object', properties: { grams: { type: 'number' } } },
        handler: ({ kg }) => ({ grams: Number(kg) * 1000 }),
      });
      const text = `name: w
steps:
  - name: a
    tool: weigh
    input_map: { kg: 2 }
  - name: b
    tool: weigh
    input_map: { kg: $.a.gram }
`;
      const { diagnostics } = compileChain(text, { file: 'w.yaml', tools: engine.tools() });
      expect(diagnostics.map((d) => [d.code, d.suggestion])).toEqual([['UNKNOWN_FIELD', 'grams']]);
    } finally {
      await engine.close();
    }
  });
});
