import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileChain, createCompileCache, loadChainSet, type ChainPlan, type NameCatalogue } from '../../src/index.js';
import { FIXTURE_TOOLS } from '../helpers/bad-fixtures.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const tools: NameCatalogue = { has: (n) => FIXTURE_TOOLS.includes(n), names: () => FIXTURE_TOOLS };

function compileFixture(name: string): ChainPlan {
  const file = join(FIXTURES, 'valid', name);
  const { plan, diagnostics } = compileChain(readFileSync(file, 'utf8'), { file, tools });
  expect(diagnostics).toEqual([]);
  return plan!;
}

const names = (plan: ChainPlan, indices: readonly number[]): string[] => indices.map((i) => plan.steps[i]!.name);
const step = (plan: ChainPlan, name: string) => plan.steps.find((s) => s.name === name)!;

describe('compiling valid chains', () => {
  it('builds the example chain: references, order and parallel', () => {
    const plan = compileFixture('city_brief.yaml');
    expect(plan.name).toBe('city_brief');
    expect(names(plan, step(plan, 'locate').waitsFor)).toEqual([]);
    expect(names(plan, step(plan, 'clock').waitsFor)).toEqual(['locate']);
    // parallel: waits only for what it reads, not for `clock` above it
    expect(names(plan, step(plan, 'facts').waitsFor)).toEqual(['locate']);
    // brief reads locate, clock and facts; by order it waits for clock and facts too
    expect(names(plan, step(plan, 'brief').waitsFor)).toEqual(['locate', 'clock', 'facts']);
    expect(names(plan, step(plan, 'brief').skipsWith)).toEqual(['locate', 'clock', 'facts']);
    expect(names(plan, plan.roots)).toEqual(['locate']);
    expect(plan.inputs.schema).toEqual({
      type: 'object',
      properties: { question: { type: 'string' }, hour12: { type: 'boolean', default: false } },
      required: ['question'],
      additionalProperties: false,
    });
    expect(plan.tools).toEqual(['find_city', 'local_time', 'city_facts', 'render_template']);
    expect(step(plan, 'locate').timeoutMs).toBe(2000);
    expect(step(plan, 'clock').retry).toMatchObject({ maxAttempts: 3, backoff: { initialMs: 100, factor: 2, maxMs: 2000, jitter: 'full' } });
    const fallback = step(plan, 'clock').fallback;
    expect(fallback?.kind).toBe('input');
    expect(fallback?.kind === 'input' && fallback.input.get({})).toEqual({ timezone: 'UTC' });
    expect(step(plan, 'brief').when?.test({ locate: { confidence: 0.7 } })).toBe(true);
    expect(step(plan, 'brief').when?.test({ locate: { confidence: 0.2 } })).toBe(false);
    expect(step(plan, 'clock').line).toBe(14);
  });

  it('resolves inputs and outputs through the compiled closures', () => {
    const plan = compileFixture('city_brief.yaml');
    const ctx = { question: 'time in Osaka?', hour12: true, locate: { city: 'Osaka', timezone: 'Asia/Tokyo' }, clock: { time: '10:00' }, facts: { population: 2_700_000 } };
    expect(step(plan, 'clock').input.get(ctx)).toEqual({ timezone: 'Asia/Tokyo', hour12: true });
    expect(step(plan, 'brief').input.get(ctx)).toEqual({ template: 'Osaka: 10:00, population 2700000' });
    expect(plan.outputs?.get({ ...ctx, brief: { text: 'hi' } })).toEqual({ city: 'Osaka', text: 'hi' });
  });

  it('leaves independent branches of a diamond unordered', () => {
    const plan = compileFixture('diamond.yaml');
    for (const n of ['b', 'c', 'd']) expect(names(plan, step(plan, n).waitsFor)).toEqual(['a']);
    expect(names(plan, step(plan, 'e').waitsFor)).toEqual(['b', 'c', 'd']);
    expect(names(plan, step(plan, 'a').dependents)).toEqual(['b', 'c', 'd']);
    expect(plan.order[0]).toBe(0);
    expect(plan.order[4]).toBe(4);
  });

  it('accepts $.item and $.index only inside for_each, and $$ as a literal dollar', () => {
    const plan = compileFixture('for_each.yaml');
    const stats = step(plan, 'stats');
    expect(stats.forEach?.items.source).toBe('$.files');
    expect(stats.forEach?.maxConcurrency).toBe(3);
    expect(stats.onError).toBe('continue');
    expect(stats.input.get(Object.assign(Object.create({ files: ['x'] }), { item: 'x', index: 0 }))).toEqual({ path: 'x', position: 0 });
    const summary = step(plan, 'summary').input.get({ stats: [{ words: 3 }, { words: 4 }] }) as Record<string, unknown>;
    expect(summary.literal_dollar).toBe('$5');
    expect(summary.all_words).toEqual([3, 4]);
  });

  it('allows a forward reference to a parallel step', () => {
    const plan = compileFixture('forward_parallel.yaml');
    expect(names(plan, step(plan, 'report').waitsFor)).toEqual(['early']);
    expect(names(plan, plan.order)).toEqual(['early', 'report']);
  });

  it('freezes the plan', () => {
    const plan = compileFixture('diamond.yaml');
    expect(Object.isFrozen(plan)).toBe(true);
    expect(Object.isFrozen(plan.steps[0])).toBe(true);
    expect(Object.isFrozen(plan.inputs.schema)).toBe(true);
  });

  it('with a compile cache, returns the cached plan for the same text, and a new one when the text changes', () => {
    const text = readFileSync(join(FIXTURES, 'valid', 'diamond.yaml'), 'utf8');
    const cache = createCompileCache();
    const a = compileChain(text, { file: 'diamond.yaml', cache }).plan;
    const b = compileChain(`${text}`, { file: 'diamond.yaml', cache }).plan;
    const c = compileChain(`${text}\n# edited\n`, { file: 'diamond.yaml', cache }).plan;
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(c?.hash).not.toBe(a?.hash);
    // Caches are the caller's: nothing is shared through the module (another cache, or none, compiles anew).
    expect(compileChain(text, { file: 'diamond.yaml', cache: createCompileCache() }).plan).not.toBe(a);
    expect(compileChain(text, { file: 'diamond.yaml' }).plan).not.toBe(a);
    cache.clear();
    expect(compileChain(text, { file: 'diamond.yaml', cache }).plan).not.toBe(a);
  });

  it('reports every problem of a file, not only the first', () => {
    const text = [
      'name: many',
      'steps:',
      '  - name: a',
      '    tool: echo',
      '    imput_map: {}',
      '  - name: b',
      '    tool: ech',
      '    input_map: { x: $.nope.y }',
      '    when: $.a.x ==',
    ].join('\n');
    const { diagnostics } = compileChain(text, { file: 'many.yaml', tools });
    expect(diagnostics.map((d) => `${d.code}@${d.line}`).sort()).toEqual(
      ['BAD_EXPRESSION@9', 'UNKNOWN_KEY@5', 'UNKNOWN_REFERENCE@8', 'UNKNOWN_TOOL@7'].sort(),
    );
    expect(diagnostics.find((d) => d.code === 'UNKNOWN_TOOL')?.suggestion).toBe('echo');
  });

  it('names the closest tools when nothing is a likely typo', () => {
    const { diagnostics } = compileChain('name: x\nsteps:\n  - name: a\n    tool: time_local\n', { tools });
    expect(diagnostics[0]?.code).toBe('UNKNOWN_TOOL');
    expect(diagnostics[0]?.message).toContain('closest:');
    expect(diagnostics[0]?.message).toContain('local_time');
  });

  it('normalises type-name inputs and suggests a misspelt type', () => {
    const { diagnostics } = compileChain('name: x\ninputs:\n  n: integr\nsteps:\n  - name: a\n    tool: echo\n');
    expect(diagnostics[0]).toMatchObject({ code: 'BAD_TYPE', line: 3, suggestion: 'integer' });
  });
});

describe('chain sets', () => {
  it('runs a chain as a sub-chain of another', async () => {
    const set = await loadChainSet(join(FIXTURES, 'subchains', 'ok'), tools);
    expect(set.diagnostics).toEqual([]);
    expect([...set.plans.keys()].sort()).toEqual(['child', 'parent']);
    expect(set.plans.get('parent')!.chains).toEqual(['child']);
  });

  it('reports a sub-chain cycle across files, in each file on the cycle', async () => {
    const set = await loadChainSet(join(FIXTURES, 'subchains', 'cycle'), tools);
    const cycles = set.diagnostics.filter((d) => d.code === 'SUBCHAIN_CYCLE');
    expect(cycles.map((d) => `${d.file!.split('/').pop()}:${d.line}:${d.col}`).sort()).toEqual(['inner.yaml:4:12', 'outer.yaml:4:12']);
    expect(cycles[0]!.message).toMatch(/inner → outer → inner|outer → inner → outer/);
    expect(set.plans.size).toBe(0);
  });

  it('reports two files declaring one chain name', async () => {
    const { compileChainSet } = await import('../../src/index.js');
    const set = compileChainSet([
      { file: 'one.yaml', text: 'name: same\nsteps:\n  - name: a\n    tool: echo\n' },
      { file: 'two.yaml', text: '\nname: same\nsteps:\n  - name: a\n    tool: echo\n' },
    ], tools);
    expect(set.diagnostics).toMatchObject([{ code: 'DUPLICATE_CHAIN', file: 'two.yaml', line: 2, col: 7 }]);
  });

  it('makes a chain that runs a broken chain unrunnable too', async () => {
    const { compileChainSet } = await import('../../src/index.js');
    const set = compileChainSet([
      { file: 'p.yaml', text: 'name: p\nsteps:\n  - name: a\n    chain: c\n' },
      { file: 'c.yaml', text: 'name: c\nsteps:\n  - name: a\n    tool: nope\n' },
    ], tools);
    expect(set.diagnostics.map((d) => d.code)).toEqual(['UNKNOWN_TOOL']);
    expect(set.plans.size).toBe(0);
  });
});
