import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { serveEngine } from '../helpers/serve-engine.js';

// The routes of `toolchain serve` through Fastify's inject (no socket): answers, error shapes and codes.

let engine: Engine;
let server: ToolchainServer;

beforeAll(async () => {
  engine = await serveEngine();
  server = await createServer(engine, { approve: ['wipe'] });
});
afterAll(async () => {
  await server.close();
  await engine.close();
});

const inject = (method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) =>
  server.app.inject({ method, url, ...(body !== undefined ? { payload: body as object } : {}), headers: { host: '127.0.0.1:7300', ...headers } });

describe('catalogue routes', () => {
  it('GET /healthz', async () => {
    const res = await inject('GET', '/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /api/chains lists every chain with its inputs schema', async () => {
    const res = await inject('GET', '/api/chains');
    expect(res.statusCode).toBe(200);
    const names = (res.json() as { chains: { name: string }[] }).chains.map((c) => c.name);
    expect(names).toEqual(['danger', 'failing', 'flaky', 'form', 'nested', 'redrive', 'slow', 'three_noop']);
  });

  it('GET /api/chains/NAME gives the definition, inputs and the DAG', async () => {
    const res = await inject('GET', '/api/chains/slow');
    expect(res.statusCode).toBe(200);
    const body = res.json() as { inputs: { properties: Record<string, unknown> }; graph: { nodes: { id: string; target: string }[]; edges: unknown[] } };
    expect(Object.keys(body.inputs.properties)).toEqual(['ms']);
    expect(body.graph.nodes.map((n) => [n.id, n.target])).toEqual([['wait', 'sleep'], ['after', 'echo']]);
    expect(body.graph.edges).toEqual([{ from: 'wait', to: 'after', data: true }]);
  });

  it('an unknown chain is a 404 with a did-you-mean', async () => {
    const res = await inject('GET', '/api/chains/slo');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'CHAIN_NOT_FOUND', message: "no chain named 'slo' (did you mean 'slow'?)" } });
  });

  it('GET /api/tools marks dangerous tools and whether they are approved', async () => {
    const res = await inject('GET', '/api/tools');
    const tools = (res.json() as { tools: { name: string; dangerous: boolean; approved: boolean }[] }).tools;
    expect(tools.find((t) => t.name === 'wipe')).toMatchObject({ dangerous: true, approved: true });
    expect(tools.find((t) => t.name === 'noop')).toMatchObject({ dangerous: false, approved: true });
  });

  it('serves the inspector page with a strict Content-Security-Policy', async () => {
    const res = await inject('GET', '/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<div id="app"></div>');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(res.body)![1]!;
    const asset = await inject('GET', `/${script}`);
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toContain('immutable');
  });

  it('an unknown route is a 404 in the error shape', async () => {
    const res = await inject('GET', '/api/nothing');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no route GET /api/nothing' } });
  });
});

describe('runs', () => {
  it('POST /api/runs?wait=true answers 200 with the RunResult', async () => {
    const res = await inject('POST', '/api/runs?wait=true', { chain: 'slow', input: { ms: 5 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ chain: 'slow', status: 'succeeded', outputs: { slept: 5 }, steps: { wait: { status: 'succeeded' }, after: { status: 'succeeded' } } });
  });

  it('POST /api/runs answers 202 with the run id; GET /api/runs/ID shows it like runs show --json', async () => {
    const res = await inject('POST', '/api/runs', { chain: 'flaky' });
    expect(res.statusCode).toBe(202);
    const { run_id } = res.json() as { run_id: string };
    expect(res.headers.location).toBe(`/api/runs/${run_id}`);
    let run: Record<string, unknown> = {};
    for (let i = 0; i < 100 && run.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      run = (await inject('GET', `/api/runs/${run_id}`)).json() as Record<string, unknown>;
    }
    expect(run).toMatchObject({ run_id, chain: 'flaky', status: 'succeeded', input: {} });
    const steps = run.steps as Record<string, { status: string; attempts: number; output: unknown; timeline: { attempt: number; status: string; fallback?: string; error?: { code: string } }[] }>;
    expect(steps.shaky!.attempts).toBe(3);
    expect(steps.shaky!.output).toEqual({ ok: true, attempt: 3 });
    expect(steps.shaky!.timeline.map((a) => [a.attempt, a.status, a.error?.code])).toEqual([[1, 'failed', 'FLAKY'], [2, 'failed', 'FLAKY'], [3, 'succeeded', undefined]]);
    expect(steps.rescued!.output).toEqual({ rescued: true });
    expect(steps.rescued!.timeline.map((a) => [a.attempt, a.status, a.fallback])).toEqual([[1, 'failed', undefined], [2, 'failed', undefined], [3, 'succeeded', 'output']]);
  });

  it('a failed run records the error of its step', async () => {
    const res = await inject('POST', '/api/runs?wait=true', { chain: 'failing' });
    expect(res.json()).toMatchObject({ status: 'failed', error: { code: 'BOOM', step: 'explode' } });
    const run = (await inject('GET', `/api/runs/${(res.json() as { run_id: string }).run_id}`)).json() as { status: string; steps: Record<string, { status: string; error?: unknown }> };
    expect(run.status).toBe('failed');
    expect(run.steps.explode).toMatchObject({ status: 'failed', error: { code: 'BOOM', message: 'the tool exploded' } });
    expect(run.steps.never).toMatchObject({ status: 'pending' });
  });

  it('shows each step its resolved input', async () => {
    const { run_id } = (await inject('POST', '/api/runs?wait=true', { chain: 'form', input: { name: 'Ada' } })).json() as { run_id: string };
    const run = (await inject('GET', `/api/runs/${run_id}`)).json() as { steps: { greet: { input: unknown; output: unknown } } };
    expect(run.steps.greet.input).toEqual({ value: 'en: hello Ada x2false' });
  });

  it('GET /api/runs lists newest first and filters by status and chain', async () => {
    const all = (await inject('GET', '/api/runs?limit=1000')).json() as { runs: { chain: string; status: string; started_at: number }[] };
    expect(all.runs.length).toBeGreaterThanOrEqual(4);
    const starts = all.runs.map((r) => r.started_at);
    expect([...starts].sort((a, b) => b - a)).toEqual(starts);
    const failed = (await inject('GET', '/api/runs?status=failed')).json() as { runs: { chain: string; status: string }[] };
    expect(failed.runs.length).toBeGreaterThan(0);
    expect(failed.runs.every((r) => r.status === 'failed')).toBe(true);
    const slow = (await inject('GET', '/api/runs?chain=slow&limit=1')).json() as { runs: { chain: string }[] };
    expect(slow.runs).toHaveLength(1);
    expect(slow.runs[0]!.chain).toBe('slow');
  });

  it('a caller-chosen run_id is an idempotency key', async () => {
    const first = await inject('POST', '/api/runs?wait=true', { chain: 'three_noop', run_id: 'order-42' });
    expect(first.json()).toMatchObject({ run_id: 'order-42', status: 'succeeded' });
    const again = await inject('POST', '/api/runs?wait=true', { chain: 'three_noop', run_id: 'order-42' });
    expect(again.json()).toEqual(first.json());
    expect(((await inject('GET', '/api/runs/order-42')).json() as { run_id: string }).run_id).toBe('order-42');
    const slow = await inject('POST', '/api/runs', { chain: 'slow', input: { ms: 2000 }, run_id: 'busy-1' });
    expect(slow.statusCode).toBe(202);
    const clash = await inject('POST', '/api/runs', { chain: 'slow', run_id: 'busy-1' });
    expect(clash.statusCode).toBe(409);
    expect((clash.json() as { error: { code: string } }).error.code).toBe('RUN_IN_PROGRESS');
    expect((await inject('POST', '/api/runs/busy-1/cancel')).statusCode).toBe(200);
  });

  it('cancel stops a running run: status cancelled, the step aborted', async () => {
    const { run_id } = (await inject('POST', '/api/runs', { chain: 'slow', input: { ms: 5000 } })).json() as { run_id: string };
    const res = await inject('POST', `/api/runs/${run_id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ run_id, status: 'cancelled', error: { code: 'ABORTED' } });
    const run = (await inject('GET', `/api/runs/${run_id}`)).json() as { status: string; steps: { wait: { status: string; error: { code: string } } } };
    expect(run.status).toBe('cancelled');
    expect(run.steps.wait).toMatchObject({ status: 'failed', error: { code: 'ABORTED' } });
    const again = await inject('POST', `/api/runs/${run_id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect((again.json() as { error: { code: string } }).error.code).toBe('RUN_FINISHED');
    expect((await inject('GET', '/api/runs?status=cancelled')).json()).toMatchObject({ runs: expect.arrayContaining([expect.objectContaining({ run_id })]) });
  });

  it('resume redrives a failed run from its recorded steps; unknown runs are 404', async () => {
    const failed = (await inject('POST', '/api/runs?wait=true', { chain: 'redrive' })).json() as { run_id: string; status: string };
    expect(failed.status).toBe('failed');
    const res = await inject('POST', `/api/runs/${failed.run_id}/resume`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ run_id: failed.run_id });
    let detail: { status: string; steps: Record<string, { status: string }> } | undefined;
    for (let i = 0; i < 100 && detail?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      detail = (await inject('GET', `/api/runs/${failed.run_id}`)).json() as typeof detail;
    }
    expect(detail).toMatchObject({ status: 'succeeded', steps: { first: { status: 'succeeded' }, second: { status: 'succeeded' } } });
    // Its event stream has the recorded step from the store, then the live ones, and ends.
    const events = (await inject('GET', `/api/runs/${failed.run_id}/events`)).body;
    expect(events.indexOf('"step":"first"')).toBeLessThan(events.indexOf('"step":"second"'));
    expect(events).toContain('event: run:finished');
    for (const [method, url] of [['GET', '/api/runs/nope'], ['GET', '/api/runs/nope/events'], ['POST', '/api/runs/nope/cancel'], ['POST', '/api/runs/nope/resume']] as const) {
      const r = await inject(method, url);
      expect(r.statusCode, url).toBe(404);
      expect((r.json() as { error: { code: string } }).error.code, url).toBe('RUN_NOT_FOUND');
    }
  });

  it('dangerous tools run at once with a standing approval, and otherwise wait for a decision', async () => {
    expect((await inject('POST', '/api/runs?wait=true', { chain: 'danger' })).json()).toMatchObject({ status: 'succeeded', outputs: { wiped: true } });
    const strict = await createServer(engine);
    try {
      const res = await strict.app.inject({ method: 'POST', url: '/api/runs?wait=true', payload: { chain: 'danger' }, headers: { host: 'localhost' } });
      const parked = res.json() as { run_id: string; status: string };
      expect(parked.status).toBe('waiting');
      const listed = await strict.app.inject({ method: 'GET', url: `/api/approvals?run=${parked.run_id}`, headers: { host: 'localhost' } });
      expect(listed.json()).toEqual({ approvals: [expect.objectContaining({ run_id: parked.run_id, step: 'wipe', tool: expect.stringMatching(/wipe$/) })] });
    } finally {
      await strict.close();
    }
  });
});

describe('bad requests', () => {
  const cases: [string, string, unknown, number, string, RegExp][] = [
    ['missing chain', '/api/runs', { input: {} }, 400, 'BAD_REQUEST', /body must have required property 'chain'/],
    ['unknown key', '/api/runs', { chain: 'slow', inputs: {} }, 400, 'BAD_REQUEST', /unknown key 'inputs' \(did you mean 'input'\?\)/],
    ['input not an object', '/api/runs', { chain: 'slow', input: [1] }, 400, 'BAD_REQUEST', /body\.input must be object/],
    ['bad run id', '/api/runs', { chain: 'slow', run_id: 'a b' }, 400, 'BAD_REQUEST', /body\.run_id must match pattern/],
    ['unknown chain', '/api/runs', { chain: 'slwo' }, 400, 'CHAIN_NOT_FOUND', /no chain named 'slwo' \(did you mean 'slow'\?\)/],
    ['bad input', '/api/runs', { chain: 'slow', input: { ms: 'soon' } }, 400, 'INPUT_INVALID', /ms/],
    ['missing input', '/api/runs?wait=true', { chain: 'form', input: {} }, 400, 'INPUT_INVALID', /name/],
    ['bad wait', '/api/runs?wait=maybe', { chain: 'slow' }, 400, 'BAD_REQUEST', /querystring\.wait must be boolean/],
  ];
  for (const [what, url, body, status, code, message] of cases) {
    it(what, async () => {
      const res = await inject('POST', url, body);
      expect(res.statusCode).toBe(status);
      const error = (res.json() as { error: { code: string; message: string } }).error;
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    });
  }

  it('malformed JSON and other content types', async () => {
    const bad = await server.app.inject({ method: 'POST', url: '/api/runs', payload: '{"chain":', headers: { host: 'localhost', 'content-type': 'application/json' } });
    expect(bad.statusCode).toBe(400);
    expect((bad.json() as { error: { code: string } }).error.code).toBe('BAD_JSON');
    const form = await server.app.inject({ method: 'POST', url: '/api/runs', payload: 'chain=slow', headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.statusCode).toBe(415);
    expect((form.json() as { error: { code: string } }).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('a body over 1 MiB is refused', async () => {
    const res = await inject('POST', '/api/runs', { chain: 'slow', input: { blob: 'x'.repeat(1024 * 1024) } });
    expect(res.statusCode).toBe(413);
    expect((res.json() as { error: { code: string } }).error.code).toBe('BODY_TOO_LARGE');
  });

  it('bad list queries', async () => {
    const res = await inject('GET', '/api/runs?status=done&limit=0');
    expect(res.statusCode).toBe(400);
    expect((res.json() as { error: { message: string } }).error.message).toMatch(/querystring\.status must be one of "running", "waiting", "succeeded", "failed", "compensation_failed", "cancelled"/);
  });
});

describe('auth', () => {
  it('without a token only loopback Host headers are answered', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/chains', headers: { host: 'evil.example:7300' } });
    expect(res.statusCode).toBe(403);
    expect((res.json() as { error: { code: string } }).error.code).toBe('HOST_NOT_ALLOWED');
    for (const host of ['localhost:7300', '127.0.0.1', '[::1]:7300']) {
      expect((await server.app.inject({ method: 'GET', url: '/healthz', headers: { host } })).statusCode, host).toBe(200);
    }
  });

  it('with a token every route but /healthz needs it', async () => {
    const secured = await createServer(engine, { token: 's3cret' });
    try {
      const call = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') => secured.app.inject({ method, url, headers: { host: 'tc.example', ...headers } });
      expect((await call('/healthz')).statusCode).toBe(200);
      for (const url of ['/metrics', '/api/chains', '/api/tools', '/api/runs', '/api/runs/x', '/']) {
        const res = await call(url);
        expect(res.statusCode, url).toBe(401);
        expect((res.json() as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      }
      expect((await call('/api/chains', { authorization: 'Bearer wrong' })).statusCode).toBe(401);
      expect((await call('/api/chains', { authorization: 'Bearer s3cret' })).statusCode).toBe(200);
      expect((await call('/api/runs?wait=true', { authorization: 'Bearer s3cret', 'content-type': 'application/json' }, 'POST')).statusCode).toBe(400);
      // A browser trades /?token= for a cookie once.
      const login = await call('/?token=s3cret');
      expect(login.statusCode).toBe(303);
      expect(login.headers.location).toBe('/');
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      expect(String(login.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
      expect((await call('/api/runs', { cookie })).statusCode).toBe(200);
      expect((await call('/?token=nope')).statusCode).toBe(401);
    } finally {
      await secured.close();
    }
  });

  it('refuses to listen on a non-loopback host without a token', async () => {
    const open = await createServer(engine);
    try {
      await expect(open.listen({ host: '0.0.0.0', port: 0 })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('without a token') });
    } finally {
      await open.close();
    }
  });
});
