import { afterEach, describe, expect, it } from 'vitest';
import type { StepEvent } from '../../src/run-model/events.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';
import { createTestClock } from '../fixtures/executor/test-clock.js';
import { agentChain, findCity } from '../fixtures/llm-agent/chains.js';
import { closeServed, serve } from '../fixtures/llm-agent/openai-server.js';

// The tool calls an agent step's model makes go through the same call unit as steps —
// they are reported as step events of `AGENT›TOOL` (with the call's id and turn) and they time out
// on the engine's injected clock, not on the wall clock.

afterEach(closeServed);

describe('agent tool calls as steps', () => {
  it('emit step:started / step:succeeded / step:failed for each call, between the agent step’s own events', async () => {
    const fake = await serve((_body, n) =>
      n === 0
        ? { content: null, tool_calls: [{ id: 'c1', name: 'find_city', arguments: { text: 'Osaka' } }, { id: 'c2', name: 'find_city', arguments: {} }] }
        : { content: 'done' },
    );
    const engine = await engineWith([findCity], [agentChain(fake.baseUrl, { tools: ['find_city'] })]);
    const log = eventLog();
    const result = await engine.run('ask', { question: 'Where?' }, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    const calls = log.events.filter((e): e is StepEvent => e.type.startsWith('step:') && 'call' in e && e.call !== undefined);
    expect(calls.map((e) => `${e.type} ${e.step} ${e.call!.id} turn ${e.call!.turn}`).sort()).toEqual([
      'step:failed agent›find_city c2 turn 1',
      'step:started agent›find_city c1 turn 1',
      'step:started agent›find_city c2 turn 1',
      'step:succeeded agent›find_city c1 turn 1',
    ]);
    const failed = calls.find((e) => e.type === 'step:failed');
    expect(failed).toMatchObject({ error: { code: 'VALIDATION_FAILED' }, attempts: 0 });
    const succeeded = calls.find((e) => e.type === 'step:succeeded');
    expect(succeeded).toMatchObject({ output: { city: 'Osaka', timezone: 'Asia/Tokyo' }, attempts: 1, index: 0 });
    // Each call's events sit inside the agent step's started … succeeded.
    const trace = log.trace();
    expect(trace.indexOf('step:started agent')).toBeLessThan(trace.indexOf('step:started agent›find_city'));
    expect(trace.lastIndexOf('step:succeeded agent›find_city')).toBeLessThan(trace.indexOf('step:succeeded agent'));
  });

  it('time out on the injected clock: a tool that hangs for ever answers TIMEOUT at once, in fake time', async () => {
    const clock = createTestClock();
    const hang = { name: 'hang', timeout: '10m', parameters: { type: 'object' }, handler: () => new Promise(() => undefined) };
    const fake = await serve((body, n) => (n === 0 ? { content: null, tool_calls: [{ id: 'h1', name: 'hang', arguments: {} }] } : { content: body.messages.at(-1)!.content }));
    const engine = await engineWith([hang], [agentChain(fake.baseUrl, { tools: ['hang'] })], { clock });
    const log = eventLog();
    const result = await engine.run('ask', { question: '?' }, { onEvent: log.onEvent });
    expect(result.status).toBe('succeeded');
    const answer = JSON.parse((result.outputs as { text: string }).text) as { error: { code: string; message: string } };
    expect(answer.error).toEqual({ code: 'TIMEOUT', message: "tool 'hang' timed out after 600000 ms (attempt 1)" });
    expect(clock.delays).toContain(600_000);
    const failed = log.events.find((e) => e.type === 'step:failed' && e.step === 'agent›hang');
    // Fake time moved by exactly the timeout between the call's start and its failure.
    expect(failed).toMatchObject({ error: { code: 'TIMEOUT' }, duration_ms: 600_000 });
  });
});
