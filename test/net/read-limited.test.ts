import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readLimited } from '../../src/net/read-limited.js';

// A response body read under a limit and a signal, from a real HTTP server that sends its
// headers and then holds the body back: the signal is what ends the read.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A response whose body never ends, and a promise of the server seeing its connection close. */
async function stalledResponse(): Promise<{ response: IncomingMessage; closed: Promise<unknown> }> {
  let closed!: Promise<unknown>;
  server = createServer((_req, res) => {
    closed = once(res, 'close');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const req = request({ host: '127.0.0.1', port, path: '/' });
  req.end();
  const [response] = (await once(req, 'response')) as [IncomingMessage];
  return { response, closed };
}

describe('readLimited', () => {
  it('stops reading when the signal aborts during the body', async () => {
    const { response, closed } = await stalledResponse();
    const controller = new AbortController();
    const read = readLimited(response, 1024, controller.signal);
    controller.abort(new Error('the call was cancelled'));
    await expect(read).rejects.toThrow();
    await closed;
  });

  it('reads nothing and lets the connection go when the signal aborted before the read', async () => {
    const { response, closed } = await stalledResponse();
    const reason = new Error('the call was cancelled');
    await expect(readLimited(response, 1024, AbortSignal.abort(reason))).rejects.toBe(reason);
    await closed;
  });
});
