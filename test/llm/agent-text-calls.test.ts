import { afterEach, describe, expect, it } from 'vitest';
import type { AgentToolCallEvent, AgentTurnEvent, RunEvent } from '../../src/run-model/events.js';
import { compileChain, type ToolDefinition } from '../../src/index.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';
import { agentChain, findCity, localTime } from '../fixtures/llm-agent/chains.js';
import { closeServed, serve } from '../fixtures/llm-agent/openai-server.js';

// `text_calls` on agent steps: servers fall back to plain content when their own tool
// parser does not recognise the model's output, and the loop would take the calls for an answer.
// Against the fake OpenAI-compatible server (which rejects tool messages that answer no call, as
// the real API does), the calls written as text are executed and the conversation stays valid.

afterEach(closeServed);

interface AgentOut {
  text: string;
  turns: number;
  stop_reason: string;
  transcript: { role: string; content: string | null; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
}

const events = (log: RunEvent[]) => ({
  turns: log.filter((e): e is AgentTurnEvent => e.type === 'agent:turn'),
  calls: log.filter((e): e is AgentToolCallEvent => e.type === 'agent:tool_call'),
});

const withTextCalls = (chain: string, mode: 'auto' | 'off') => chain.replace('    agent:\n', `    agent:\n      text_calls: ${mode}\n`);

/** A forecast tool whose `days` must be an integer: a string "3" fails its validation. */
const forecast: ToolDefinition = {
  name: 'forecast',
  description: 'The forecast for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city', 'days'], additionalProperties: false },
  handler: (args) => ({ city: args.city, days: args.days, outlook: 'sunny' }),
};

describe('agent step: calls written as text (text_calls: auto, the default)', () => {
  it('executes Hermes calls found in the content, answers them under ids of its own, and says so in the turn event', async () => {
    const fake = await serve((body, n) => {
      if (n === 0) return { content: 'Let me look that up.\n<tool_call>\n{"name": "find_city", "arguments": {"text": "What time is it in Osaka?"}}\n</tool_call>' };
      const city = JSON.parse(body.messages.at(-1)!.content!) as { timezone: string };
      return { content: `Osaka uses ${city.timezone}.` };
    });
    const engine = await engineWith([findCity, localTime], [agentChain(fake.baseUrl, { tools: ['find_city', 'local_time'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'What time is it in Osaka?' }, { onEvent: log.onEvent });

    expect(fake.rejected).toEqual([]);
    expect(result.status).toBe('succeeded');
    const out = result.outputs as AgentOut;
    expect(out).toMatchObject({ stop_reason: 'final', turns: 2, text: 'Osaka uses Asia/Tokyo.' });
    // The assistant message is what the server should have sent: the prose, and the call as tool_calls.
    const assistant = out.transcript[2]!;
    expect(assistant.content).toBe('Let me look that up.');
    expect(assistant.tool_calls).toEqual([{ id: 't001c0000', type: 'function', function: { name: 'find_city', arguments: '{"text":"What time is it in Osaka?"}' } }]);
    expect(out.transcript[3]).toEqual({ role: 'tool', tool_call_id: 't001c0000', content: JSON.stringify({ city: 'Osaka', timezone: 'Asia/Tokyo' }) });
    // The second request carried that call and its answer.
    expect(fake.requests[1]!.body.messages.slice(2).map((m) => m.role)).toEqual(['assistant', 'tool']);

    const { turns, calls } = events(log.events);
    expect(turns[0]!.text_calls).toEqual({ formats: ['hermes'], calls: 1, problems: [] });
    expect(turns[0]!.tool_calls).toEqual([{ id: 't001c0000', name: 'find_city' }]);
    expect(turns[1]!.text_calls).toBeUndefined();
    expect(calls.map((c) => [c.turn, c.tool_call_id, c.target?.name, c.is_error])).toEqual([[1, 't001c0000', 'find_city', false]]);
  });

  it('types XML values by the offered schema (Qwen3-Coder), so an integer parameter passes validation', async () => {
    const fake = await serve((_body, n) =>
      n === 0
        ? { content: '<tool_call>\n<function=forecast>\n<parameter=city>\nOsaka\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>' }
        : { content: 'Sunny for three days.' },
    );
    const engine = await engineWith([forecast], [agentChain(fake.baseUrl, { tools: ['forecast'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'Weather in Osaka?' }, { onEvent: log.onEvent });

    expect(fake.rejected).toEqual([]);
    const out = result.outputs as AgentOut;
    expect(out.transcript[2]).toMatchObject({ content: null, tool_calls: [{ function: { name: 'forecast', arguments: '{"city":"Osaka","days":3}' } }] });
    const { turns, calls } = events(log.events);
    expect(turns[0]!.text_calls).toMatchObject({ formats: ['qwen3-coder'], calls: 1 });
    expect(calls[0]).toMatchObject({ name: 'forecast', is_error: false, arguments: { city: 'Osaka', days: 3 } });
    expect(JSON.parse(calls[0]!.content)).toEqual({ city: 'Osaka', days: 3, outlook: 'sunny' });
  });

  it('reads a name the step does not offer as a problem, not a call: nothing runs, the turn is final and its event names the closest tool', async () => {
    const fake = await serve(() => ({ content: '<tool_call>{"name": "find_cty", "arguments": {"text": "Osaka"}}</tool_call>' }));
    const engine = await engineWith([findCity, localTime], [agentChain(fake.baseUrl, { tools: ['find_city', 'local_time'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'Where?' }, { onEvent: log.onEvent });

    const out = result.outputs as AgentOut;
    expect(out).toMatchObject({ stop_reason: 'final', turns: 1 });
    const { turns, calls } = events(log.events);
    expect(calls).toEqual([]);
    expect(turns[0]!.text_calls).toMatchObject({ formats: [], calls: 0, problems: [{ code: 'UNKNOWN_TOOL', name: 'find_cty', suggestions: ['find_city', 'local_time'] }] });
  });

  it('leaves prose alone: a tool definition quoted in the answer is not a call, and the event has no text_calls', async () => {
    const content = 'You could define it as {"name": "find_city", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}.';
    const fake = await serve(() => ({ content }));
    const engine = await engineWith([findCity], [agentChain(fake.baseUrl, { tools: ['find_city'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'How?' }, { onEvent: log.onEvent });
    expect(result.outputs).toMatchObject({ stop_reason: 'final', turns: 1, text: content });
    expect(events(log.events).turns[0]!.text_calls).toBeUndefined();
  });
});

describe('agent step: text_calls: off', () => {
  it('takes the text for the answer, calls and all', async () => {
    const content = '<tool_call>\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n</tool_call>';
    const fake = await serve(() => ({ content }));
    const engine = await engineWith([findCity], [withTextCalls(agentChain(fake.baseUrl, { tools: ['find_city'] }), 'off')]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'Where?' }, { onEvent: log.onEvent });
    expect(result.outputs).toMatchObject({ stop_reason: 'final', turns: 1, text: content });
    expect(events(log.events).calls).toEqual([]);
    expect(events(log.events).turns[0]!.text_calls).toBeUndefined();
    expect(fake.requests).toHaveLength(1);
  });

  it('is compiled into the plan, and any other value is a schema error at its key', () => {
    const chain = withTextCalls(agentChain('http://127.0.0.1:9/v1', { tools: ['find_city'] }), 'off');
    expect(compileChain(chain).plan!.steps[0]!.target).toMatchObject({ kind: 'agent', agent: { textCalls: 'off' } });
    const plain = compileChain(agentChain('http://127.0.0.1:9/v1', { tools: ['find_city'] })).plan!.steps[0]!.target;
    expect(plain.kind === 'agent' && plain.agent.textCalls).toBeUndefined();
    const bad = compileChain(chain.replace('text_calls: off', 'text_calls: sometimes')).diagnostics;
    expect(bad.map((d) => [d.code, d.pointer])).toEqual([['BAD_VALUE', '/steps/0/agent/text_calls']]);
  });
});
