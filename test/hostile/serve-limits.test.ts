import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// `toolchain serve` from bin/ under a flood. Slow clients that trickle their headers used to keep
// their sockets for as long as they liked (Node's checks ran every 30 s, against 60 s), before
// anyone authenticated; sockets, event streams and runs in flight had no cap; a cross-site
// "simple" POST could cancel a run; a Host of `127.0.0.1:PORT@evil.com` passed for loopback; a
// malformed token cookie was a 500 with a stack in the log; a reused run id with another input
// answered the first run's result; an INPUT_INVALID message put the refused value in the log.
// The limits are set small here with `--limit`, so the test's own clock (lines it sent) measures them.

let dir: string;
let serve: ServeProcess;
let port: number;

const PLUGIN = `name: t\nversion: 1.0.0\ntools:\n  - name: sleep\n    handler: tools/sleep.js\n    parameters: { type: object, properties: { ms: { type: integer } } }\n`;
const SLEEP = `export default (args, ctx) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => resolve({ slept: args.ms }), args.ms);
  ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
});\n`;
const SLOW = `name: slow\ninputs:\n  ms: { type: integer, default: 60000 }\n  secret: { type: string, maxLength: 4, default: "x" }\nsteps:\n  - name: s\n    tool: sleep\n    input_map: { ms: $.ms }\noutputs: { s: $.s }\n`;

beforeAll(async () => {
  dir = await tempDir('toolchain-serve-limits-');
  await writeFiles(dir, { 'plugins/t/plugin.yaml': PLUGIN, 'plugins/t/tools/sleep.js': SLEEP, 'chains/slow.yaml': SLOW });
  serve = await startServe({
    cwd: dir,
    globals: ['--chains', 'chains', '--plugins', 'plugins'],
    args: ['--no-watch', '--isolation', 'none', '--store', 'memory:', '--grace', '0s', '--limit', 'headers-timeout=1s', '--limit', 'request-timeout=1500ms', '--limit', 'connections=80', '--limit', 'event-streams=2', '--limit', 'runs-in-flight=3', '--limit', 'body-bytes=64KiB'],
    env: { TOOLCHAIN_TOKEN: '', TOOLCHAIN_SERVE_LIMITS: 'retry-after=7' },
  });
  port = Number(new URL(serve.url).port);
}, 30_000);
afterAll(async () => {
  await serve?.stop();
  await removeDir(dir);
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: { error?: { code: string; message: string } } & Record<string, unknown>;
}

/** One request with exactly these headers (fetch would not send a Host or Origin of our choosing). */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...(text !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, agent: false }, (res) => {
      let data = '';
      res.on('data', (d: Buffer) => (data += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data.startsWith('{') ? JSON.parse(data) : {} }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const startSlow = async (input: Record<string, unknown> = {}): Promise<string> => {
  const res = await send('POST', '/api/runs', {}, { chain: 'slow', input });
  expect(res.status).toBe(202);
  return res.body.run_id as string;
};

describe('slow clients', () => {
  it('closes 50 sockets that send one header line at a time once the headers timeout passes', async () => {
    const sockets: Socket[] = [];
    const lines: number[] = [];
    const closed = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => closed.add(i));
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
      sockets.push(socket);
      lines.push(1);
    }
    // The test's clock: a header line on every open socket each tick, until every socket is closed or 30 ticks went by.
    for (let tick = 0; tick < 30 && closed.size < 50; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      for (let i = 0; i < 50; i++) {
        if (closed.has(i)) continue;
        sockets[i]!.write(`X-Slow-${tick}: ${'a'.repeat(10)}\r\n`);
        lines[i]!++;
      }
    }
    expect(closed.size).toBe(50);
    // 1 s of headers at 4 lines a second, and the check that runs every quarter of the timeout.
    expect(Math.max(...lines)).toBeLessThanOrEqual(12);
    expect((await send('GET', '/healthz')).status).toBe(200);
  });

  it('closes sockets that trickle a request body once the request timeout passes', async () => {
    const closed = new Set<number>();
    const sockets = Array.from({ length: 10 }, (_, i) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => closed.add(i));
      socket.write(`POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      return socket;
    });
    let ticks = 0;
    for (; ticks < 30 && closed.size < 10; ticks++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      sockets.forEach((socket, i) => closed.has(i) || socket.write(' '));
    }
    expect(closed.size).toBe(10);
    // 1.5 s at 4 bytes a second, and the check every quarter of the shorter timeout.
    expect(ticks).toBeLessThanOrEqual(14);
  });

  it('does not cut an answer that takes longer than the request timeout (a ?wait=true run)', async () => {
    const res = await send('POST', '/api/runs?wait=true', {}, { chain: 'slow', input: { ms: 2500 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', outputs: { s: { slept: 2500 } } });
  });

  it('closes the sockets past the connection cap as they connect', async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 100; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => closed++);
      sockets.push(socket);
    }
    await waitFor(() => expect(closed).toBeGreaterThanOrEqual(20));
    for (const s of sockets) s.destroy();
    await waitFor(async () => expect((await send('GET', '/healthz')).status).toBe(200));
  });
});

describe('caps with Retry-After', () => {
  it('refuses a run past the runs-in-flight cap with 429 and Retry-After, and takes one again once a run ended', async () => {
    const ids = [await startSlow(), await startSlow(), await startSlow()];
    const refused = await send('POST', '/api/runs', {}, { chain: 'slow' });
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('TOO_MANY_RUNS');
    expect(refused.headers['retry-after']).toBe('7');
    expect((await send('POST', `/api/runs/${ids[0]}/cancel`)).status).toBe(200);
    const again = await startSlow();
    for (const id of [...ids.slice(1), again]) expect((await send('POST', `/api/runs/${id}/cancel`)).status).toBe(200);
  });

  it('refuses an event stream past the cap with 503 and Retry-After, and takes one again once a stream closed', async () => {
    const id = await startSlow();
    /** Opens the run's event stream: its status, and how to close it. */
    const stream = (): Promise<{ status: number; close: () => void }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: `/api/runs/${id}/events`, headers: { host: `127.0.0.1:${port}` }, agent: false }, (res) => {
          res.resume();
          resolve({ status: res.statusCode!, close: () => req.destroy() });
        });
        req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
        req.end();
      });
    const open = [await stream(), await stream()];
    expect(open.map((o) => o.status)).toEqual([200, 200]);
    const refused = await send('GET', `/api/runs/${id}/events`);
    expect(refused.status).toBe(503);
    expect(refused.body.error?.code).toBe('TOO_MANY_STREAMS');
    expect(refused.headers['retry-after']).toBe('7');
    open[0]!.close();
    const third = await waitFor(async () => {
      const o = await stream();
      if (o.status !== 200) o.close();
      expect(o.status).toBe(200);
      return o;
    });
    third.close();
    open[1]!.close();
    expect((await send('POST', `/api/runs/${id}/cancel`)).status).toBe(200);
  });

  it('refuses a body past body-bytes with 413', async () => {
    const res = await send('POST', '/api/runs', {}, { chain: 'slow', input: { pad: 'x'.repeat(70 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('BODY_TOO_LARGE');
  });
});

describe('requests from elsewhere', () => {
  it('refuses a cross-site simple POST (Origin of another site, or Sec-Fetch-Site) on every state-changing route', async () => {
    const id = await startSlow();
    const cases: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: `http://localhost:${port + 1}` },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of cases) {
      for (const path of [`/api/runs/${id}/cancel`, `/api/runs/${id}/resume`, '/api/runs']) {
        const res = await send('POST', path, { ...headers, 'content-type': 'text/plain' });
        expect({ path, headers, status: res.status, code: res.body.error?.code }).toEqual({ path, headers, status: 403, code: 'CROSS_SITE_REQUEST' });
      }
    }
    expect((await send('GET', `/api/runs/${id}`)).body.status).toBe('running');
    // The server's own page, and a client that is no browser, may.
    expect((await send('POST', `/api/runs/${id}/cancel`, { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });

  it('parses the Host header strictly: 127.0.0.1:PORT@evil.com is not loopback', async () => {
    for (const host of [`127.0.0.1:${port}@evil.com`, `localhost:${port}/x`, `127.0.0.1 :${port}`, `[::1]x:${port}`, `127.0.0.1:99999`]) {
      const res = await send('GET', '/api/runs', { host });
      expect({ host, status: res.status, code: res.body.error?.code }).toEqual({ host, status: 403, code: 'HOST_NOT_ALLOWED' });
    }
    expect((await send('GET', '/api/runs', { host: `localhost:${port}` })).status).toBe(200);
    expect((await send('GET', '/api/runs', { host: `[::1]:${port}` })).status).toBe(200);
  });
});

describe('run ids and inputs', () => {
  it('refuses a run id reused with another input or chain with 409 RUN_ID_CONFLICT, and answers the same request again', async () => {
    const first = await send('POST', '/api/runs?wait=true', {}, { chain: 'slow', input: { ms: 1 }, run_id: 'reused-id' });
    expect(first.body).toMatchObject({ status: 'succeeded', outputs: { s: { slept: 1 } } });
    const same = await send('POST', '/api/runs?wait=true', {}, { chain: 'slow', input: { ms: 1 }, run_id: 'reused-id' });
    expect(same.body).toMatchObject({ status: 'succeeded' });
    const other = await send('POST', '/api/runs?wait=true', {}, { chain: 'slow', input: { ms: 2 }, run_id: 'reused-id' });
    expect(other.status).toBe(409);
    expect(other.body.error?.code).toBe('RUN_ID_CONFLICT');
  });

  it('keeps an input value refused as INPUT_INVALID out of the log (the caller is told)', async () => {
    const res = await send('POST', '/api/runs?wait=true', {}, { chain: 'slow', input: { secret: 'hunter2-is-my-password' } });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INPUT_INVALID');
    expect(res.body.error?.message).toContain('hunter2');
    await waitFor(() => expect(serve.stdout()).toContain('INPUT_INVALID'));
    expect(serve.stdout()).not.toContain('hunter2');
  });
});

describe('a server with a token', () => {
  it('answers a malformed token cookie with 401 and logs no failure; warns that --token is visible in ps', async () => {
    const other = await startServe({ cwd: dir, globals: ['--chains', 'chains', '--plugins', 'plugins'], args: ['--no-watch', '--store', 'memory:', '--token', 'a-long-enough-token'], env: { TOOLCHAIN_TOKEN: '' } });
    try {
      expect(other.stderr()).toMatch(/warning: the token was given with --token.*TOOLCHAIN_TOKEN/);
      const res = await fetch(`${other.url}/api/runs`, { headers: { cookie: 'toolchain_token=%E0%A4%A' } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as Answer['body']).error?.code).toBe('UNAUTHORIZED');
      const ok = await fetch(`${other.url}/api/runs`, { headers: { cookie: `toolchain_token=${encodeURIComponent('a-long-enough-token')}` } });
      expect(ok.status).toBe(200);
      expect(other.stdout()).not.toContain('request failed');
    } finally {
      await other.stop();
    }
  }, 30_000);
});

describe('--limit', () => {
  it('refuses an unknown name, a value that does not read, and a headers timeout past the request timeout, before serving', async () => {
    for (const [args, env, says] of [
      [['--limit', 'sockets=5'], {}, /--limit takes NAME=VALUE with NAME one of headers-timeout/],
      [['--limit', 'headers-timeout=soon'], {}, /--limit headers-timeout must be a duration/],
      [['--limit', 'body-bytes=1GiB'], {}, /--limit body-bytes must be a size/],
      [['--limit', 'headers-timeout=40s'], {}, /headers timeout \(40000 ms\) must not be longer than the request timeout/],
      [[], { TOOLCHAIN_SERVE_LIMITS: 'runs-in-flight=0' }, /--limit runs-in-flight must be a whole number/],
    ] as const) {
      const refused = await runCli(['serve', '--port', '0', '--no-watch', ...args], { cwd: dir, env: { TOOLCHAIN_TOKEN: '', ...env } });
      expect({ args, code: refused.code }).toEqual({ args, code: 2 });
      expect(refused.stderr).toMatch(says);
    }
  });
});
