import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type ToolDefinition } from '../../src/index.js';
import { API_KEY, closeServed, serve } from '../fixtures/llm-agent/openai-server.js';

// Agent steps as an attacker with a chain file of their own uses them. `api_key_env:
// TOOLCHAIN_TOKEN` with `base_url` at a loopback or private address sent the serve token as a
// bearer token: model endpoints now follow the address policy of http_request (allowed by
// TOOLCHAIN_MODEL_ALLOW), and a key may come only from a variable declared for models
// (TOOLCHAIN_MODEL_KEYS, else a name ending in _API_KEY), never from TOOLCHAIN_*. Replies had no
// size limit (a 200 MB reply read whole) and a reply with 5,000 calls ran them all at once
// (MaxListenersExceededWarning): replies stop at 2 MiB, a turn runs at most 32 calls, 8 at a time,
// and the transcript in the output is bounded.

interface Hit {
  readonly authorization: string | undefined;
}

let listener: Server;
let hits: Hit[];
let port: number;
const saved: Record<string, string | undefined> = {};
const VARS = ['TOOLCHAIN_MODEL_ALLOW', 'TOOLCHAIN_MODEL_KEYS', 'TOOLCHAIN_TOKEN', 'HOSTILE_SECRET', 'HOSTILE_API_KEY'];

beforeAll(async () => {
  for (const v of VARS) saved[v] = process.env[v];
  hits = [];
  listener = createServer((req, res) => {
    hits.push({ authorization: req.headers.authorization });
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'pwned' }, finish_reason: 'stop' }] }));
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  port = (listener.address() as AddressInfo).port;
});
afterEach(async () => {
  for (const v of VARS) (saved[v] === undefined ? delete process.env[v] : (process.env[v] = saved[v]));
  hits.length = 0;
  await closeServed();
});
afterAll(() => listener.close());

const chain = (baseUrl: string, keyEnv?: string, tools: readonly string[] = []): string =>
  [
    'name: ask',
    'steps:',
    '  - name: agent',
    '    agent:',
    `      base_url: ${baseUrl}`,
    '      model: m',
    ...(keyEnv !== undefined ? [`      api_key_env: ${keyEnv}`] : []),
    '      prompt: hello',
    `      tools: [${tools.join(', ')}]`,
    '      max_turns: 3',
    '',
  ].join('\n');

async function engineFor(source: string, tools: readonly ToolDefinition[] = []): Promise<Engine> {
  const engine = await createEngine({ cache: 'off' });
  for (const t of tools) engine.registerTool(t);
  engine.addChain(source);
  return engine;
}

describe('model endpoints and keys', () => {
  it('never sends TOOLCHAIN_TOKEN, even to an allowed endpoint: MODEL_KEY_REFUSED, and nothing arrives', async () => {
    process.env.TOOLCHAIN_TOKEN = 'the-serve-token-123';
    process.env.TOOLCHAIN_MODEL_ALLOW = `127.0.0.1:${port}`;
    const engine = await engineFor(chain(`http://127.0.0.1:${port}/v1`, 'TOOLCHAIN_TOKEN'));
    const result = await engine.run('ask', {});
    expect(result.error).toMatchObject({ code: 'MODEL_KEY_REFUSED', step: 'agent' });
    expect(hits).toEqual([]);
    // Listing it does not help: the engine's own variables are never model keys.
    process.env.TOOLCHAIN_MODEL_KEYS = 'TOOLCHAIN_TOKEN';
    expect((await engine.run('ask', {})).error?.code).toBe('MODEL_KEY_REFUSED');
    expect(hits).toEqual([]);
    await engine.close();
  });

  it('reads only a variable declared for models: a …_API_KEY name, or one TOOLCHAIN_MODEL_KEYS lists', async () => {
    process.env.TOOLCHAIN_MODEL_ALLOW = `127.0.0.1:${port}`;
    process.env.HOSTILE_SECRET = 'aws-secret';
    process.env.HOSTILE_API_KEY = 'sk-model';
    const undeclared = await engineFor(chain(`http://127.0.0.1:${port}/v1`, 'HOSTILE_SECRET'));
    expect((await undeclared.run('ask', {})).error?.code).toBe('MODEL_KEY_REFUSED');
    expect(hits).toEqual([]);
    const conventional = await engineFor(chain(`http://127.0.0.1:${port}/v1`, 'HOSTILE_API_KEY'));
    expect((await conventional.run('ask', {})).status).toBe('succeeded');
    expect(hits).toEqual([{ authorization: 'Bearer sk-model' }]);
    process.env.TOOLCHAIN_MODEL_KEYS = 'HOSTILE_SECRET';
    expect((await undeclared.run('ask', {})).status).toBe('succeeded');
    // Once a list is given, it is the whole list.
    expect((await conventional.run('ask', {})).error?.code).toBe('MODEL_KEY_REFUSED');
    await Promise.all([undeclared.close(), conventional.close()]);
  });

  it('refuses loopback, private, metadata and IPv4-compatible endpoints unless TOOLCHAIN_MODEL_ALLOW lists them', async () => {
    process.env.HOSTILE_API_KEY = 'sk-model';
    for (const url of [`http://127.0.0.1:${port}/v1`, `http://localhost:${port}/v1`, 'http://169.254.169.254/v1', 'http://10.0.0.1/v1', `http://[::127.0.0.1]:${port}/v1`]) {
      const engine = await engineFor(chain(url, 'HOSTILE_API_KEY'));
      const result = await engine.run('ask', {});
      expect({ url, code: result.error?.code }).toEqual({ url, code: 'MODEL_ADDRESS_REFUSED' });
      await engine.close();
    }
    expect(hits).toEqual([]);
    // The http_request list does not open model endpoints.
    process.env.TOOLCHAIN_HTTP_ALLOW = `127.0.0.1:${port}`;
    const engine = await engineFor(chain(`http://127.0.0.1:${port}/v1`));
    expect((await engine.run('ask', {})).error?.code).toBe('MODEL_ADDRESS_REFUSED');
    delete process.env.TOOLCHAIN_HTTP_ALLOW;
    process.env.TOOLCHAIN_MODEL_ALLOW = `127.0.0.1:${port}`;
    expect((await engine.run('ask', {})).status).toBe('succeeded');
    await engine.close();
  });
});

describe('model replies', () => {
  let big: Server;
  let bigPort: number;
  let sent = 0;
  beforeAll(async () => {
    // A reply of 200 MB, written in 1 MiB chunks, with no Content-Length; /declared says it up front.
    big = createServer((req, res) => {
      req.resume();
      const declared = req.url?.startsWith('/declared') === true;
      res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(200 * 1024 * 1024) } : {}) });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      sent = 0;
      const pump = (): void => {
        while (sent < 200 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    big.listen(0, '127.0.0.1');
    await once(big, 'listening');
    bigPort = (big.address() as AddressInfo).port;
  });
  afterAll(() => big.close());

  it('stops reading a reply past 2 MiB with MODEL_REPLY_TOO_LARGE, streamed or declared', async () => {
    process.env.TOOLCHAIN_MODEL_ALLOW = `127.0.0.1:${bigPort}`;
    for (const path of ['/streamed', '/declared']) {
      const engine = await engineFor(chain(`http://127.0.0.1:${bigPort}${path}`));
      const result = await engine.run('ask', {});
      expect(result.error?.code).toBe('MODEL_REPLY_TOO_LARGE');
      // The server was stopped long before its 200 chunks: the client hung up.
      expect(sent).toBeLessThan(100);
      await engine.close();
    }
  });

  it('runs at most 32 of 5,000 calls in one turn, 8 at a time, answers the rest, warns of nothing, and bounds the transcript', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    let calls = 0;
    let inFlight = 0;
    let peak = 0;
    const count: ToolDefinition = {
      name: 'count',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      handler: async (args, ctx) => {
        calls++;
        peak = Math.max(peak, ++inFlight);
        ctx.signal.addEventListener('abort', () => undefined);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { n: args.n, pad: 'p'.repeat(400) };
      },
    };
    const fake = await serve((_body, n) =>
      n === 0 ? { tool_calls: Array.from({ length: 5000 }, (_, i) => ({ id: `c${i}`, name: 'count', arguments: { n: i } })) } : { content: 'done' },
    );
    process.env.TOOLCHAIN_MODEL_ALLOW = '127.0.0.1';
    process.env.HOSTILE_API_KEY = API_KEY;
    const engine = await engineFor(chain(fake.baseUrl, 'HOSTILE_API_KEY', ['count']), [count]);
    const result = await engine.run('ask', {});
    process.off('warning', onWarning);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('succeeded');
    expect(fake.rejected).toEqual([]);
    expect(calls).toBe(32);
    expect(peak).toBeLessThanOrEqual(8);
    expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    // The model was told which calls did not run, in an answer to each.
    const second = fake.requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(second).toHaveLength(5000);
    expect(String(second[4999]!.content)).toContain('TOO_MANY_CALLS');
    const output = result.outputs as { transcript: unknown[]; transcript_omitted?: number; text: string };
    expect(output.text).toBe('done');
    expect(Buffer.byteLength(JSON.stringify(output.transcript))).toBeLessThanOrEqual(1024 * 1024 + 1024);
    expect(output.transcript_omitted).toBeGreaterThan(0);
    await engine.close();
  });
});
