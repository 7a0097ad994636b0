import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import httpRequest, { MAX_REDIRECTS } from '../../plugins/http/tools/http_request.js';
import { parseAllowList, refusal } from '../../src/net/index.js';
import { createEngine, createRegistry } from '../../src/index.js';
import { context, failure } from './helpers.js';

// Http_request fetched loopback, private, link-local and metadata addresses,
// also through redirects. They are now refused after DNS resolution and on every redirect hop,
// unless TOOLCHAIN_HTTP_ALLOW lists them.

interface Hit {
  readonly url: string;
  readonly method: string;
  readonly authorization?: string;
}

function serve(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): { server: Server; hits: Hit[] } {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    hits.push({ url: req.url ?? '', method: req.method ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    handler(req, res);
  });
  return { server, hits };
}

let inner: ReturnType<typeof serve>;
let outer: ReturnType<typeof serve>;
let innerPort: number;
let outerPort: number;

beforeAll(async () => {
  inner = serve((_req, res) => res.end('secret'));
  inner.server.listen(0, '127.0.0.1');
  await once(inner.server, 'listening');
  innerPort = (inner.server.address() as AddressInfo).port;
  outer = serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect' && to) {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: to });
      res.end();
    } else if (url.pathname === '/loop') {
      res.writeHead(302, { location: '/loop' });
      res.end();
    } else if (url.pathname === '/bomb') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024)));
    } else res.end(`outer ${req.method}`);
  });
  outer.server.listen(0, '127.0.0.1');
  await once(outer.server, 'listening');
  outerPort = (outer.server.address() as AddressInfo).port;
});
afterAll(() => {
  for (const s of [inner.server, outer.server]) {
    s.closeAllConnections();
    s.close();
  }
});

const allowOuter = () => context({ TOOLCHAIN_HTTP_ALLOW: `127.0.0.1:${outerPort}` });

describe('http_request refuses internal addresses', () => {
  it('a loopback literal is refused with ADDRESS_REFUSED and the server sees nothing', async () => {
    const before = inner.hits.length;
    const f = await failure(httpRequest({ url: `http://127.0.0.1:${innerPort}/` }, context()));
    expect(f.code).toBe('ADDRESS_REFUSED');
    expect(f.message).toContain('TOOLCHAIN_HTTP_ALLOW');
    expect(inner.hits.length).toBe(before);
  });

  it('"localhost" is refused after DNS resolution', async () => {
    expect((await failure(httpRequest({ url: `http://localhost:${innerPort}/` }, context()))).code).toBe('ADDRESS_REFUSED');
  });

  it('other spellings of loopback are refused: decimal, IPv4-mapped IPv6, ::1, 0.0.0.0', async () => {
    for (const url of [`http://2130706433:${innerPort}/`, `http://[::ffff:127.0.0.1]:${innerPort}/`, `http://[::1]:${innerPort}/`, `http://0.0.0.0:${innerPort}/`]) {
      expect((await failure(httpRequest({ url }, context()))).code, url).toBe('ADDRESS_REFUSED');
    }
  });

  it('the metadata address, private ranges and carrier-grade NAT are refused without a connection attempt', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/']) {
      expect((await failure(httpRequest({ url, timeout_ms: 2000 }, context()))).code, url).toBe('ADDRESS_REFUSED');
    }
  });

  it('a redirect from an allowed server to a refused address is refused at that hop', async () => {
    const before = inner.hits.length;
    const f = await failure(httpRequest({ url: `http://127.0.0.1:${outerPort}/redirect?to=http://127.0.0.1:${innerPort}/` }, allowOuter()));
    expect(f.code).toBe('ADDRESS_REFUSED');
    expect(inner.hits.length).toBe(before);
  });

  it('a redirect to a host name that resolves to loopback is refused too', async () => {
    const f = await failure(httpRequest({ url: `http://127.0.0.1:${outerPort}/redirect?to=http://localhost:${innerPort}/` }, allowOuter()));
    expect(f.code).toBe('ADDRESS_REFUSED');
  });

  it('the allow-list admits an address with a port, and a CIDR range', async () => {
    expect((await httpRequest({ url: `http://127.0.0.1:${outerPort}/` }, allowOuter())).body).toBe('outer GET');
    const wide = context({ TOOLCHAIN_HTTP_ALLOW: '10.0.0.0/8, 127.0.0.0/8' });
    expect((await httpRequest({ url: `http://127.0.0.1:${outerPort}/redirect?to=http://127.0.0.1:${innerPort}/` }, wide)).body).toBe('secret');
  });

  it('redirects are followed by hand: 303 turns a POST into a GET, credentials stay with their origin', async () => {
    const both = context({ TOOLCHAIN_HTTP_ALLOW: '127.0.0.1' });
    const res = await httpRequest(
      { url: `http://127.0.0.1:${outerPort}/redirect?status=303&to=http://127.0.0.1:${innerPort}/x`, method: 'POST', body: 'b', headers: { authorization: 'Bearer t' } },
      both,
    );
    expect(res).toMatchObject({ status: 200, body: 'secret', url: `http://127.0.0.1:${innerPort}/x` });
    expect(inner.hits.at(-1)).toEqual({ url: '/x', method: 'GET' });
    expect(outer.hits.at(-1)?.authorization).toBe('Bearer t');
  });

  it(`more than ${MAX_REDIRECTS} redirects fail with TOO_MANY_REDIRECTS`, async () => {
    expect((await failure(httpRequest({ url: `http://127.0.0.1:${outerPort}/loop` }, allowOuter()))).code).toBe('TOO_MANY_REDIRECTS');
  });

  it('a gzip bomb stops at max_bytes of decoded body', async () => {
    expect((await failure(httpRequest({ url: `http://127.0.0.1:${outerPort}/bomb` }, allowOuter()))).code).toBe('RESPONSE_TOO_LARGE');
  });

  it('an allow-list entry that does not read fails with BAD_ALLOW_LIST, naming it', async () => {
    const f = await failure(httpRequest({ url: 'http://example.invalid/' }, context({ TOOLCHAIN_HTTP_ALLOW: '127.0.0.1,intranet' })));
    expect(f.code).toBe('BAD_ALLOW_LIST');
    expect(f.message).toContain('"intranet"');
  });

  it('the policy, entry by entry', () => {
    const allow = parseAllowList('127.0.0.1:8765,10.0.0.0/8,[::1]:9000');
    expect(refusal('127.0.0.1', 8765, allow)).toBeUndefined();
    expect(refusal('127.0.0.1', 8766, allow)).toContain('loopback');
    expect(refusal('10.9.8.7', 443, allow)).toBeUndefined();
    expect(refusal('::1', 9000, allow)).toBeUndefined();
    expect(refusal('::ffff:169.254.169.254', 80, [])).toContain('link-local');
    expect(refusal('64:ff9b::7f00:1', 80, [])).toBeDefined();
    expect(refusal('93.184.216.34', 80, [])).toBeUndefined();
    expect(refusal('2606:4700::1111', 443, [])).toBeUndefined();
  });

  it('through the engine, fetch_and_extract on a loopback URL fails with ADDRESS_REFUSED and is not retried', async () => {
    const repo = join(import.meta.dirname, '..', '..');
    const registry = createRegistry({ env: { ...process.env, TOOLCHAIN_HTTP_ALLOW: '' } });
    const engine = await createEngine({ chainsDir: join(repo, 'chains'), pluginsDir: join(repo, 'plugins'), registry });
    try {
      const result = await engine.run('fetch_and_extract', { url: `http://127.0.0.1:${innerPort}/` });
      expect(result.error?.code).toBe('ADDRESS_REFUSED');
      expect(result.steps.fetch?.attempts).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
