import { describe, expect, it } from 'vitest';
import { compileChain, compileChainSet, type NameCatalogue } from '../../src/index.js';
import { engineWith } from '../fixtures/executor/setup.js';

// The `agent` step kind in the chain language: schema, compile-time checks of its tools, and its
// prompt and system read like an input_map (DAG edges, paths resolved per run).

const catalogue = (...names: string[]): NameCatalogue => ({ has: (n) => names.includes(n), names: () => names });

const agentStep = (extra = '', tools = '[find_city]') => `
name: ask
inputs: { question: string }
steps:
  - name: locate
    tool: find_city
    input_map: { text: $.question }
  - name: agent
    parallel: true
    agent:
      base_url: http://127.0.0.1:9/v1/
      model: gpt-test
      system: "The city is {{ $.locate.city }}."
      prompt: $.question
      tools: ${tools}
      max_turns: 4
${extra}`;

describe('agent steps: compiling', () => {
  it('compiles to a third step kind whose prompt and system are the step’s input', () => {
    const { plan, diagnostics } = compileChain(agentStep());
    expect(diagnostics).toEqual([]);
    const step = plan!.steps[1]!;
    expect(step.label).toBe('agent gpt-test');
    expect(step.target).toEqual({ kind: 'agent', agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-test', tools: ['find_city'], maxTurns: 4, maxFailures: 3 } });
    // `{{ $.locate.city }}` in system is a reference: the agent waits for locate although it is parallel.
    expect(step.waitsFor).toEqual([0]);
    expect(step.input.get({ question: 'Why?', locate: { city: 'Osaka' } })).toEqual({ prompt: 'Why?', system: 'The city is Osaka.' });
    expect(plan!.tools).toEqual(['find_city']);
  });

  it('checks the offered names against tools and chains, at the name’s position', () => {
    const text = agentStep('', '[find_city, city_brief, find_ctiy]');
    const { diagnostics } = compileChain(text, { tools: catalogue('find_city', 'local_time'), chains: catalogue('city_brief') });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'UNKNOWN_TOOL', pointer: '/steps/1/agent/tools/2', line: 15, suggestion: 'find_city' });
    // Without both catalogues a name cannot be told to be missing (it may be in the other one).
    expect(compileChain(text, { tools: catalogue('find_city') }).diagnostics).toEqual([]);
  });

  it('reports schema problems in agent settings', () => {
    const codes = (text: string) => compileChain(text).diagnostics.map((d) => [d.code, d.pointer]);
    expect(codes(agentStep('    input_map: { a: 1 }'))).toEqual([['BAD_VALUE', '/steps/1/input_map']]);
    expect(codes(agentStep().replace('max_turns: 4', 'max_turn: 4'))).toEqual([['UNKNOWN_KEY', '/steps/1/agent/max_turn']]);
    expect(codes(agentStep().replace('max_turns: 4', 'max_turns: 0'))).toEqual([['SCHEMA_INVALID', '/steps/1/agent/max_turns']]);
    expect(codes(agentStep().replace('      prompt: $.question\n', ''))).toEqual([['MISSING_KEY', '/steps/1/agent']]);
    const both = compileChain(agentStep('    tool: find_city')).diagnostics;
    expect(both.map((d) => d.code)).toEqual(['BAD_VALUE']);
    expect(both[0]!.message).toContain("'tool' and 'agent'");
    const none = compileChain('name: a\nsteps:\n  - name: s\n').diagnostics;
    expect(none[0]!.message).toContain("'agent'");
  });

  it('an agent that offers its own chain is a sub-chain cycle', () => {
    const self = agentStep('', '[ask]');
    const set = compileChainSet([{ file: 'ask.yaml', text: self }], catalogue('find_city'));
    expect(set.diagnostics.map((d) => d.code)).toEqual(['SUBCHAIN_CYCLE']);
    expect(set.plans.has('ask')).toBe(false);
  });
});

describe('agent steps: resolving the messages', () => {
  it('a prompt path that matches nothing fails the step before any request', async () => {
    const text = `
name: ask
inputs: { question: { type: string, default: '' } }
steps:
  - name: agent
    agent: { base_url: "http://127.0.0.1:9/v1", model: m, prompt: $.missing_input_key }
`;
    // An unknown root is a compile error; a path under a known input that matches nothing is a run-time one.
    expect(compileChain(text).diagnostics.map((d) => d.code)).toEqual(['UNKNOWN_REFERENCE']);
    const engine = await engineWith([], [text.replace('$.missing_input_key', '$.question.deeper')]);
    const result = await engine.run('ask', {});
    expect(result.error).toMatchObject({ code: 'VALIDATION_FAILED', step: 'agent' });
    expect(result.error!.message).toContain('$.question.deeper matched nothing');
    await engine.close();
  });

  it('an offered tool that is not installed when the run starts fails the step with TOOL_NOT_FOUND', async () => {
    const engine = await engineWith([], [agentStep().replace(/ {2}- name: locate\n.*\n.*\n/, '').replace('{{ $.locate.city }}', 'unknown')]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'TOOL_NOT_FOUND', step: 'agent' });
    expect(result.error!.message).toContain("offers 'find_city'");
    await engine.close();
  });
});
