import { afterEach, describe, expect, it } from 'vitest';
import { engineWith } from '../fixtures/executor/setup.js';
import { agentChain, findCity, KEY_ENV } from '../fixtures/llm-agent/chains.js';
import { API_KEY, closeServed, serve, type FakeOpenAI } from '../fixtures/llm-agent/openai-server.js';

// The endpoint's failures as step errors (codes `retry` can name), cancellation, and the fake
// server's own strictness (a fake that accepted anything would prove nothing).

afterEach(closeServed);

describe('agent step: HTTP failures are step errors', () => {
  it('HTTP 500 fails the step with MODEL_ERROR, and retry_on can target it', async () => {
    const fake = await serve(() => ({ status: 500, error: 'The server had an error while processing your request.' }));
    const engine = await engineWith([], [agentChain(fake.baseUrl)]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'MODEL_ERROR', step: 'agent' });
    expect(result.error!.message).toContain('500');
    expect(result.error!.message).toContain('The server had an error');
    await engine.close();

    await fake.close();
    const flaky = await serve((_b, n) => (n === 0 ? { status: 503, error: 'overloaded' } : { content: 'Recovered.' }));
    const retrying = await engineWith([], [
      agentChain(flaky.baseUrl, { stepExtra: '    retry: { max_attempts: 2, retry_on: [MODEL_ERROR], backoff: { initial: 1ms } }' }),
    ]);
    const retried = await retrying.run('ask', { question: 'Hi?' });
    expect(retried.status).toBe('succeeded');
    expect(retried.steps.agent!.attempts).toBe(2);
    expect(retried.outputs).toMatchObject({ text: 'Recovered.' });
    await retrying.close();
  });

  it('HTTP 429 is RATE_LIMITED, with the Retry-After the endpoint sent', async () => {
    const fake = await serve(() => ({ status: 429, error: 'Rate limit reached for requests', headers: { 'retry-after': '7' } }));
    const engine = await engineWith([], [agentChain(fake.baseUrl)]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'RATE_LIMITED' });
    expect(result.error!.message).toContain('Rate limit reached');
    expect(result.error!.message).toContain('retry after 7 s');
    await engine.close();
  });

  it('a wrong key is MODEL_AUTH with the API’s message; a missing key variable says which', async () => {
    const fake = await serve(() => ({ content: 'unreachable' }));
    process.env.TEST_WRONG_API_KEY = 'sk-wrong';
    const engine = await engineWith([], [agentChain(fake.baseUrl, { api_key_env: 'TEST_WRONG_API_KEY' })]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'MODEL_AUTH' });
    expect(result.error!.message).toContain('Incorrect API key provided');
    expect(fake.rejected).toHaveLength(1);
    await engine.close();

    const unset = await engineWith([], [agentChain(fake.baseUrl, { api_key_env: 'TEST_UNSET_API_KEY' })]);
    const missing = await unset.run('ask', { question: 'Hi?' });
    expect(missing.error).toMatchObject({ code: 'MODEL_AUTH' });
    expect(missing.error!.message).toContain('TEST_UNSET_API_KEY');
    await unset.close();
  });

  it('other 4xx answers are MODEL_REJECTED carrying the API’s message', async () => {
    const fake = await serve(() => ({ status: 400, error: "This model's maximum context length is 8192 tokens." }));
    const engine = await engineWith([], [agentChain(fake.baseUrl)]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'MODEL_REJECTED' });
    expect(result.error!.message).toContain('maximum context length');
    await engine.close();
  });

  it('an endpoint that cannot be reached is MODEL_UNREACHABLE; a 200 that is not a completion is MODEL_ERROR', async () => {
    const fake = await serve(() => ({ content: 'x' }));
    const dead = fake.baseUrl;
    await closeServed();
    const engine = await engineWith([], [agentChain(dead)]);
    expect((await engine.run('ask', { question: 'Hi?' })).error).toMatchObject({ code: 'MODEL_UNREACHABLE' });
    await engine.close();

    const proxy = await serve(() => ({ raw: '<html>502 Bad Gateway</html>' }));
    const behindProxy = await engineWith([], [agentChain(proxy.baseUrl)]);
    const result = await behindProxy.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'MODEL_ERROR' });
    expect(result.error!.message).toContain('not JSON');
    await behindProxy.close();
  });
});

describe('agent step: cancellation', () => {
  it('the run’s signal aborts the HTTP request in flight', async () => {
    const fake = await serve(() => ({ hang: true }));
    const engine = await engineWith([], [agentChain(fake.baseUrl)]);
    const abort = new AbortController();
    const running = engine.run('ask', { question: 'Hi?' }, { signal: abort.signal });
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(result.error).toMatchObject({ code: 'ABORTED' });
    await fake.disconnected; // the server saw the client go away: the request was really aborted
    await engine.close();
  });

  it('the step’s timeout bounds the whole loop and aborts the request', async () => {
    const fake = await serve(() => ({ hang: true }));
    const engine = await engineWith([], [agentChain(fake.baseUrl, { stepExtra: '    timeout: 100ms' })]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'TIMEOUT', step: 'agent' });
    await fake.disconnected;
    await engine.close();
  });

  it('a tool that ignores its signal cannot hold an aborted agent', async () => {
    const stuck = { ...findCity, handler: () => new Promise(() => undefined) };
    const fake = await serve(() => ({ tool_calls: [{ name: 'find_city', arguments: { text: 'Osaka' } }] }));
    const engine = await engineWith([stuck], [agentChain(fake.baseUrl, { tools: ['find_city'], stepExtra: '    timeout: 150ms' })]);
    const result = await engine.run('ask', { question: 'Hi?' });
    expect(result.error).toMatchObject({ code: 'TIMEOUT' });
    await engine.close();
  });
});

describe('the fake endpoint rejects what the real API rejects', () => {
  const post = async (fake: FakeOpenAI, body: unknown, key = API_KEY) => {
    const res = await fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: { message: string } } };
  };
  const user = { role: 'user', content: 'hi' };

  it.each([
    ['a missing model', { messages: [user] }, /model/],
    ['messages that are not an array', { model: 'm', messages: 'hi' }, /messages/],
    ['a tool message answering no call', { model: 'm', messages: [user, { role: 'tool', tool_call_id: 'call_x', content: '{}' }] }, /preceeding message with 'tool_calls'/],
    [
      'a tool message with the wrong id',
      {
        model: 'm',
        messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'b', content: '{}' }],
      },
      /preceeding/,
    ],
    [
      'an unanswered tool call',
      { model: 'm', messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, user] },
      /did not have response messages: a/,
    ],
    ['tools not in function form', { model: 'm', messages: [user], tools: [{ name: 'f', parameters: { type: 'object' } }] }, /tools\[0\]\.type/],
    ['a function name with a slash', { model: 'm', messages: [user], tools: [{ type: 'function', function: { name: 'geo/find', parameters: { type: 'object' } } }] }, /pattern/],
    ['an empty tools list', { model: 'm', messages: [user], tools: [] }, /empty array/],
  ])('rejects %s with 400', async (_what, body, message) => {
    const fake = await serve(() => ({ content: 'ok' }));
    const res = await post(fake, body);
    expect(res.status).toBe(400);
    expect(res.body.error!.message).toMatch(message);
  });

  it('rejects a bad key with 401 and accepts a well-formed request', async () => {
    const fake = await serve(() => ({ content: 'ok' }));
    expect((await post(fake, { model: 'm', messages: [user] }, 'sk-nope')).status).toBe(401);
    expect((await post(fake, { model: 'm', messages: [user] })).status).toBe(200);
    expect(process.env[KEY_ENV]).toBe(API_KEY);
  });
});
