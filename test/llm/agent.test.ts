import { afterEach, describe, expect, it } from 'vitest';
import type { AgentToolCallEvent, AgentTurnEvent, RunEvent } from '../../src/run-model/events.js';
import { createRegistry } from '../../src/index.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';
import { agentChain, factsChain, findCity, localTime, population } from '../fixtures/llm-agent/chains.js';
import { closeServed, serve, type ScriptedReply } from '../fixtures/llm-agent/openai-server.js';

// The agent loop  against a local OpenAI-compatible server that answers
// from a script and rejects malformed requests as the real API does.

afterEach(closeServed);

interface AgentOut {
  text: string;
  turns: number;
  stop_reason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  transcript: { role: string; content: string | null; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
}

const agentEvents = (events: RunEvent[]) => ({
  turns: events.filter((e): e is AgentTurnEvent => e.type === 'agent:turn'),
  calls: events.filter((e): e is AgentToolCallEvent => e.type === 'agent:tool_call'),
});

describe('agent step: a task that needs two tools and a chain', () => {
  it('executes the calls, feeds results back with their ids, and ends on the final answer', async () => {
    // find_city and city_facts are asked for together (and must run concurrently); local_time needs
    // find_city's timezone, so it comes in the next turn.
    let inFlight = 0;
    let overlapped = false;
    const slowFindCity = {
      ...findCity,
      handler: async (args: Record<string, unknown>, ctx: Parameters<typeof findCity.handler>[1]) => {
        inFlight++;
        await new Promise((r) => setTimeout(r, 30));
        overlapped ||= inFlight > 1;
        inFlight--;
        return findCity.handler(args, ctx);
      },
    };
    const slowPopulation = {
      ...population,
      handler: async (args: Record<string, unknown>, ctx: Parameters<typeof population.handler>[1]) => {
        inFlight++;
        await new Promise((r) => setTimeout(r, 30));
        overlapped ||= inFlight > 1;
        inFlight--;
        return population.handler(args, ctx);
      },
    };
    const fake = await serve((body, n) => {
      if (n === 0) {
        return {
          content: null,
          tool_calls: [
            { id: 'call_city', name: 'find_city', arguments: { text: 'What time is it in Osaka?' } },
            { id: 'call_facts', name: 'city_facts', arguments: { city: 'Osaka' } },
          ],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        };
      }
      if (n === 1) {
        const city = JSON.parse(body.messages.find((m) => m.tool_call_id === 'call_city')!.content!) as { timezone: string };
        return { content: 'Checking the clock.', tool_calls: [{ id: 'call_time', name: 'local_time', arguments: { timezone: city.timezone } }], usage: { prompt_tokens: 150, completion_tokens: 10, total_tokens: 160 } };
      }
      const time = JSON.parse(body.messages.at(-1)!.content!) as { time: string };
      return { content: `It is ${time.time} in Osaka (population 2.75 million).`, usage: { prompt_tokens: 200, completion_tokens: 15, total_tokens: 215 } };
    });
    const engine = await engineWith([slowFindCity, localTime, slowPopulation], [factsChain, agentChain(fake.baseUrl, { tools: ['find_city', 'local_time', 'city_facts'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'What time is it in Osaka?' }, { onEvent: log.onEvent });

    expect(fake.rejected).toEqual([]);
    expect(result.status).toBe('succeeded');
    const out = result.outputs as AgentOut;
    expect(out.stop_reason).toBe('final');
    expect(out.turns).toBe(3);
    expect(out.text).toBe('It is 21:30 in Osaka (population 2.75 million).');
    expect(out.usage).toEqual({ prompt_tokens: 450, completion_tokens: 45, total_tokens: 495 });
    expect(overlapped).toBe(true);

    // The first request: system and user messages, the three functions in OpenAI form.
    const first = fake.requests[0]!;
    expect(first.headers.authorization).toMatch(/^Bearer sk-test/);
    expect(first.body.model).toBe('gpt-test');
    expect(first.body.messages).toEqual([
      { role: 'system', content: 'You answer questions about cities.' },
      { role: 'user', content: 'Question: What time is it in Osaka?' },
    ]);
    expect(first.body.tools!.map((t) => t.function.name)).toEqual(['find_city', 'local_time', 'city_facts']);
    expect(first.body.tools![2]!.function).toMatchObject({ description: 'Facts about a city.', parameters: { type: 'object', properties: { city: { type: 'string' } } } });

    // The second request carries both results, each under the id of the call it answers.
    const second = fake.requests[1]!.body.messages;
    expect(second.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [expect.objectContaining({ id: 'call_city' }), expect.objectContaining({ id: 'call_facts' })] },
      { role: 'tool', tool_call_id: 'call_city', content: JSON.stringify({ city: 'Osaka', timezone: 'Asia/Tokyo' }) },
      { role: 'tool', tool_call_id: 'call_facts', content: JSON.stringify({ population: 2_750_000 }) },
    ]);

    // The transcript is the whole conversation, the final answer last.
    expect(out.transcript.map((m) => `${m.role}${m.tool_call_id ? `:${m.tool_call_id}` : ''}`)).toEqual([
      'system', 'user', 'assistant', 'tool:call_city', 'tool:call_facts', 'assistant', 'tool:call_time', 'assistant',
    ]);
    expect(out.transcript.at(-2)).toEqual({ role: 'tool', tool_call_id: 'call_time', content: JSON.stringify({ timezone: 'Asia/Tokyo', time: '21:30' }) });

    // Every model turn and every call is an event, inside the step's started/succeeded pair.
    const { turns, calls } = agentEvents(log.events);
    expect(turns.map((t) => [t.turn, t.tool_calls.map((c) => c.name), t.total_tokens])).toEqual([
      [1, ['find_city', 'city_facts'], 120],
      [2, ['local_time'], 280],
      [3, [], 495],
    ]);
    expect(calls.map((c) => [c.turn, c.tool_call_id, c.target?.name, c.is_error]).sort()).toEqual([
      [1, 'call_city', 'find_city', false],
      [1, 'call_facts', 'city_facts', false],
      [2, 'call_time', 'local_time', false],
    ]);
    expect(calls[0]).toMatchObject({ run_id: result.run_id, chain: 'ask', step: 'agent', attempt: 1 });
    const trace = log.trace((e) => e.type.startsWith('step:') || e.type.startsWith('agent:'));
    expect(trace[0]).toBe('step:started agent');
    expect(trace.at(-1)).toBe('step:succeeded agent');
    // The chain the model called ran as a child of this run, its steps attributed to the agent step.
    const child = log.events.find((e) => e.type === 'run:started' && e.chain === 'city_facts');
    expect(child?.parent).toEqual({ run_id: result.run_id, step: 'agent' });
    await engine.close();
  });

  it('offers plugin tools under valid function names, maps calls back, and offers nothing else', async () => {
    // Two plugins provide `find_city`: the exported names tell them apart (`geo__find_city`).
    const registry = createRegistry();
    registry.register(findCity, { plugin: 'geo', version: '1.0.0' });
    registry.register({ ...findCity, handler: () => ({ city: 'Kyoto' }) }, { plugin: 'maps', version: '1.0.0' });
    registry.register(localTime);
    const fake = await serve((body, n) => {
      if (n === 0) {
        return {
          tool_calls: [
            { id: 'c1', name: 'maps__find_city', arguments: '{"text": "Osaka"}' },
            // Installed, but not offered by this step: the model cannot reach it.
            { id: 'c2', name: 'local_time', arguments: { timezone: 'UTC' } },
          ],
        };
      }
      return { content: 'Kyoto.' };
    });
    const engine = await engineWith([], [agentChain(fake.baseUrl, { tools: ['geo/find_city', 'maps/find_city'] })], { registry });
    const result = await engine.run('ask', { question: 'Where?' });
    expect(fake.rejected).toEqual([]);
    expect(fake.requests[0]!.body.tools!.map((t) => t.function.name)).toEqual(['geo__find_city', 'maps__find_city']);
    const out = result.outputs as AgentOut;
    expect(out.transcript[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '{"city":"Kyoto"}' });
    expect(out.transcript[4]).toMatchObject({ role: 'tool', tool_call_id: 'c2' });
    expect(JSON.parse(out.transcript[4]!.content!)).toMatchObject({ error: { code: 'TOOL_NOT_FOUND' } });
    await engine.close();
  });
});

describe('agent step: limits', () => {
  it('stops after max_failures consecutive failed calls, each answered with a message the model can act on', async () => {
    const fake = await serve(() => ({ content: null, tool_calls: [{ name: 'find_city', arguments: { txt: 'Osaka' } }] }));
    const engine = await engineWith([findCity], [agentChain(fake.baseUrl, { tools: ['find_city'], max_failures: 3, max_turns: 10 })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'Where?' }, { onEvent: log.onEvent });
    expect(fake.rejected).toEqual([]);
    expect(result.status).toBe('succeeded');
    const out = result.outputs as AgentOut;
    expect(out.stop_reason).toBe('max_failures');
    expect(out.turns).toBe(3);
    expect(fake.requests).toHaveLength(3);
    // What went back to the model names the field, what was expected, and the closest name.
    const answer = JSON.parse(out.transcript.at(-1)!.content!) as { error: { code: string; message: string } };
    expect(answer.error.code).toBe('VALIDATION_FAILED');
    expect(answer.error.message).toContain("missing required property 'text'");
    expect(answer.error.message).toContain("unknown property 'txt' (did you mean 'text'?)");
    const { calls } = agentEvents(log.events);
    expect(calls.map((c) => c.is_error)).toEqual([true, true, true]);
    await engine.close();
  });

  it('a success resets the failure count; an unknown function and broken JSON count as failures', async () => {
    const replies: ScriptedReply[] = [
      { tool_calls: [{ name: 'find_town', arguments: { text: 'x' } }] },
      { tool_calls: [{ name: 'find_city', arguments: { text: 'Osaka' } }] },
      { tool_calls: [{ name: 'find_city', arguments: '{"text": "Osaka"' }] },
      { tool_calls: [{ name: 'find_city', arguments: { text: { a: 1 } } }, { name: 'nope', arguments: {} }] },
    ];
    const fake = await serve((_b, n) => replies[n] ?? { content: 'done' });
    const engine = await engineWith([findCity], [agentChain(fake.baseUrl, { tools: ['find_city'], max_failures: 2 })]);
    const result = await engine.run('ask', { question: 'Where?' });
    expect(fake.rejected).toEqual([]);
    const out = result.outputs as AgentOut;
    expect(out.stop_reason).toBe('max_failures');
    expect(out.turns).toBe(4);
    const toolMessages = out.transcript.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content!) as { error?: { code: string; message: string } });
    expect(toolMessages[0]!.error).toMatchObject({ code: 'TOOL_NOT_FOUND', message: expect.stringContaining('closest: find_city') });
    expect(toolMessages[1]!.error).toBeUndefined();
    expect(toolMessages[2]!.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('not valid JSON') });
    expect(toolMessages[3]!.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining("'text' must be string") });
    expect(toolMessages[4]!.error).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await engine.close();
  });

  it('stops at max_turns after executing the last turn’s calls', async () => {
    const fake = await serve(() => ({ content: 'Still looking.', tool_calls: [{ name: 'find_city', arguments: { text: 'Osaka' } }] }));
    const engine = await engineWith([findCity], [agentChain(fake.baseUrl, { tools: ['find_city'], max_turns: 2 })]);
    const result = await engine.run('ask', { question: 'Where?' });
    const out = result.outputs as AgentOut;
    expect(out).toMatchObject({ stop_reason: 'max_turns', turns: 2, text: 'Still looking.' });
    expect(fake.requests).toHaveLength(2);
    expect(out.transcript.at(-1)!.role).toBe('tool');
    await engine.close();
  });

  it('stops when the reported total tokens exceed budget_tokens, before running that turn’s calls', async () => {
    let calls = 0;
    const counted = { ...findCity, handler: (args: Record<string, unknown>, ctx: Parameters<typeof findCity.handler>[1]) => (calls++, findCity.handler(args, ctx)) };
    const fake = await serve(() => ({ tool_calls: [{ name: 'find_city', arguments: { text: 'Osaka' } }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }));
    const engine = await engineWith([counted], [agentChain(fake.baseUrl, { tools: ['find_city'], budget_tokens: 100, max_turns: 10 })]);
    const result = await engine.run('ask', { question: 'Where?' });
    const out = result.outputs as AgentOut;
    expect(out).toMatchObject({ stop_reason: 'budget', turns: 2, usage: { total_tokens: 120 } });
    expect(calls).toBe(1);
    expect(fake.requests).toHaveLength(2);
    await engine.close();
  });

  it('an agent with no tools sends no tools list and ends on the first answer', async () => {
    const fake = await serve(() => ({ content: 'Hello.' }));
    const engine = await engineWith([], [agentChain(fake.baseUrl)]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(fake.rejected).toEqual([]);
    expect(fake.requests[0]!.body.tools).toBeUndefined();
    expect(result.outputs).toMatchObject({ text: 'Hello.', turns: 1, stop_reason: 'final' });
    await engine.close();
  });
});
