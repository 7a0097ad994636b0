import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';

// `toolchain mcp` on hostile bytes. Malformed JSON and batches got no reply; a
// message over 10 MiB made the server exit 0; a handler writing to stdout corrupted the stream; a
// -32603 error carried a dump of zod's issues. Driven here as a client would: raw lines on the
// server's stdin, every line of its stdout read back as JSON.

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'isolation');

interface Server {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line, parsed (a line that does not parse fails the test that reads it). */
  readonly lines: unknown[];
  readonly raw: string[];
  stderr: string;
  send(line: string): void;
  /** The next reply to a message sent after `from` replies were in, or the one with this id. */
  reply(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

function start(isolation: string): Server {
  const child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'mcp', '--no-watch', '--isolation', isolation, '--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')], { cwd: FIXTURE });
  const server: Server = {
    child,
    lines: [],
    raw: [],
    stderr: '',
    send: (line) => void child.stdin.write(`${line}\n`),
    async reply(match) {
      return waitFor(() => {
        const found = server.lines.find((m) => match(m as Record<string, unknown>));
        if (!found) throw new Error(`no such reply yet; stdout so far: ${server.raw.join('\n').slice(-500)}`);
        return found as Record<string, unknown>;
      }, 15_000, 10);
    },
  };
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    pending += text;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      server.raw.push(line);
      server.lines.push(JSON.parse(line));
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => void (server.stderr += text));
  return server;
}

const byId = (id: number) => (m: Record<string, unknown>) => m.id === id;
const call = (id: number, name: string, args: object = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function connected(isolation: string): Promise<Server> {
  const server = start(isolation);
  server.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
  await server.reply(byId(1));
  server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return server;
}

describe.each(['none', 'worker'])('toolchain mcp --isolation %s', (isolation) => {
  let server: Server;
  beforeAll(async () => {
    server = await connected(isolation);
  }, 30_000);
  afterAll(() => {
    server.child.kill();
  });

  it('answers a line that is not JSON with -32700 and keeps serving', async () => {
    server.send('{"jsonrpc": "2.0", "id": 2, "method": ');
    const error = await server.reply((m) => (m.error as { code?: number } | undefined)?.code === -32700);
    expect(error).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/^Parse error: /) } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    expect(await server.reply(byId(3))).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });

  it('answers a batch, and a message that is not JSON-RPC, with -32600 (keeping the id it can read)', async () => {
    server.send(JSON.stringify([{ jsonrpc: '2.0', id: 4, method: 'ping' }]));
    expect(await server.reply((m) => (m.error as { message?: string } | undefined)?.message?.includes('batches') === true)).toMatchObject({ id: null, error: { code: -32600 } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 42 }));
    expect(await server.reply(byId(5))).toMatchObject({ error: { code: -32600, message: expect.stringMatching(/^Invalid Request: /) } });
    server.send('17');
    expect(await server.reply((m) => (m.error as { message?: string } | undefined)?.message === 'Invalid Request: a message must be a JSON object')).toMatchObject({ id: null });
  });

  it('answers a message over 10 MiB with -32600 and reads on from the next line', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping', params: { pad: 'x'.repeat(11 * 1024 * 1024) } });
    server.send(huge);
    expect(await server.reply((m) => (m.error as { message?: string } | undefined)?.message?.includes('at most 10 MiB') === true)).toMatchObject({ id: null, error: { code: -32600 } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }));
    expect(await server.reply(byId(7))).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect(server.child.exitCode).toBeNull();
  }, 30_000);

  it('says what is wrong with bad params in one sentence (-32602), not a dump of schema issues', async () => {
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 5 } }));
    const answer = await server.reply(byId(8));
    const error = answer.error as { code: number; message: string };
    expect(error.code).toBe(-32602);
    expect(error.message).toBe('Invalid params: params.name: Invalid input: expected string, received number');
    expect(error.message).not.toContain('\n');
    expect(error.message).not.toContain('"code"');
  });

  it("keeps stdout for the protocol while a handler writes to stdout; the text goes to stderr", async () => {
    server.send(call(9, 'print'));
    const answer = await server.reply(byId(9));
    expect(answer.result).toMatchObject({ structuredContent: { printed: true } });
    // Every stdout line parsed as JSON (the stdout reader would have thrown otherwise).
    expect(server.raw.some((l) => l.includes('from a handler'))).toBe(false);
    await waitFor(() => expect(server.stderr).toContain('stdout from a handler'));
  });

  it('survives an exception thrown from a timer after a call returned, and says which plugin', async () => {
    server.send(call(10, 'throw_later'));
    await server.reply(byId(10));
    await waitFor(() => expect(server.stderr).toMatch(/plugin 'rogue'.*thrown from a timer after returning/));
    server.send(call(11, 'echo', { x: 1 }));
    expect(await server.reply(byId(11))).toMatchObject({ result: { structuredContent: { args: { x: 1 } } } });
  });

  it('a handler that calls process.exit fails its call with TOOL_CRASHED; the server keeps serving', async () => {
    server.send(call(12, 'quit'));
    const answer = await server.reply(byId(12));
    expect(answer.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'TOOL_CRASHED' } } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'ping' }));
    expect(await server.reply(byId(13))).toEqual({ jsonrpc: '2.0', id: 13, result: {} });
  });
});

describe('toolchain mcp (worker isolation, its default)', () => {
  let server: Server;
  beforeAll(async () => {
    server = await connected('worker');
  }, 30_000);
  afterAll(() => {
    server.child.kill();
  });

  it('answers while tools spin in while(true); cancels end the spinning workers, and fresh ones serve', async () => {
    // Four spinners take every worker the plugin may have: nothing else could run until they end.
    const spinners = [30, 31, 32, 33];
    for (const id of spinners) server.send(call(id, 'spin'));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 34, method: 'ping' }));
    expect(await server.reply(byId(34))).toEqual({ jsonrpc: '2.0', id: 34, result: {} });
    for (const id of spinners) server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'enough' } }));
    for (let id = 35; id < 40; id++) server.send(call(id, 'echo', { id }));
    for (let id = 35; id < 40; id++) expect(await server.reply(byId(id))).toMatchObject({ result: { structuredContent: { args: { id } } } });
  });
});
