// How many calls an MCP server works on at once: a client that sends many calls without waiting
// gets at most `concurrency` of them running (default 8), the rest started in turn as places
// free up, and every call answered. In process, over the SDK's in-memory transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { createMcpServer } from '../../src/entry/mcp.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

/** An engine whose tool `hold` waits until `release` is called, counting the calls at work. */
async function holdingEngine(): Promise<{ engine: Engine; atWork: () => number; most: () => number; started: () => number; release: () => void }> {
  const engine = await createEngine({ cache: 'off' });
  let working = 0;
  let most = 0;
  let started = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  engine.registerTool({
    name: 'hold',
    parameters: { type: 'object', properties: { n: { type: 'integer' } } },
    handler: async (a: { n?: number }) => {
      started++;
      most = Math.max(most, ++working);
      await gate;
      working--;
      return { n: a.n };
    },
  });
  open.push(() => engine.close());
  return { engine, atWork: () => working, most: () => most, started: () => started, release };
}

async function connect(engine: Engine, concurrency?: number): Promise<Client> {
  const mcp = await createMcpServer(engine, concurrency !== undefined ? { concurrency } : {});
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverSide);
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(clientSide);
  open.unshift(async () => {
    await client.close();
    await mcp.server.close();
  });
  return client;
}

/** Lets every message in flight on the in-memory transport be handled (turns of the event loop, not time). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('MCP server concurrency', () => {
  it('works on at most `concurrency` calls at once; the others wait and are all answered', async () => {
    const h = await holdingEngine();
    const client = await connect(h.engine, 2);
    const calls = [1, 2, 3, 4, 5].map((n) => client.callTool({ name: 'hold', arguments: { n } }));
    await settle();
    expect(h.started()).toBe(2);
    expect(h.atWork()).toBe(2);
    h.release();
    const results = await Promise.all(calls);
    expect(results.map((r) => r.structuredContent ?? JSON.parse((r.content as { text: string }[])[0]!.text))).toEqual([1, 2, 3, 4, 5].map((n) => ({ n })));
    expect(h.most()).toBe(2);
    expect(h.started()).toBe(5);
  });

  it('defaults to 8 at once', async () => {
    const h = await holdingEngine();
    const client = await connect(h.engine);
    const calls = Array.from({ length: 12 }, (_, n) => client.callTool({ name: 'hold', arguments: { n } }));
    await settle();
    expect(h.started()).toBe(8);
    h.release();
    await Promise.all(calls);
    expect(h.most()).toBe(8);
    expect(h.started()).toBe(12);
  });

  it('starts no run for a call the client cancelled while it waited for a place', async () => {
    const h = await holdingEngine();
    // A chain that may wait for a person runs as a durable run of its own.
    h.engine.addChain('name: held\ninputs: { n: integer }\nsteps:\n  - { name: work, tool: hold, input_map: { n: $.n } }\n  - { name: ok, approval: { prompt: go? } }\n');
    const client = await connect(h.engine, 1);
    const first = client.callTool({ name: 'held', arguments: { n: 1 } });
    const cancel = new AbortController();
    const second = client.callTool({ name: 'held', arguments: { n: 2 } }, undefined, { signal: cancel.signal });
    await settle();
    expect(h.started()).toBe(1);
    cancel.abort();
    await expect(second).rejects.toThrow();
    h.release();
    await first;
    await settle();
    expect(h.started()).toBe(1);
    expect((await h.engine.runs.list({ chain: 'held' })).length).toBe(1);
  });

  it('refuses a concurrency that is not a whole number of at least 1', async () => {
    const h = await holdingEngine();
    await expect(createMcpServer(h.engine, { concurrency: 0 })).rejects.toMatchObject({ code: 'USAGE' });
    await expect(createMcpServer(h.engine, { concurrency: 1.5 })).rejects.toThrow(/whole number of at least 1/);
  });
});
