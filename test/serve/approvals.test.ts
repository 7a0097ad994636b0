import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// Runs that wait, over the HTTP API of the real `toolchain serve` from bin/ (with a token, on a
// SQLite store): events sent with POST /api/events wake `wait_for` runs, approval requests are
// listed and decided (once: 409 after that, 404 for none), a cross-site POST is refused, and
// `--approve TOOL` stays a standing approval.

const FIXTURE = join(REPO, 'test', 'fixtures', 'serve', 'waits');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const TOKEN = 'waits-test-token-1';
const root = mkdtempSync(join(tmpdir(), 'toolchain-serve-approvals-'));
let serve: ServeProcess;
let standing: ServeProcess;

beforeAll(async () => {
  [serve, standing] = await Promise.all([
    startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}`, TOOLCHAIN_TOKEN: TOKEN } }),
    startServe({ cwd: root, globals: DIRS, args: ['--no-watch', '--approve', 'open_vault'], env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'standing.db')}` } }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all([serve?.stop(), standing?.stop()]);
  rmSync(root, { recursive: true, force: true });
});

const AUTH = { authorization: `Bearer ${TOKEN}` };

async function api(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}, base = serve.url): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON answers of many shapes
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(base === serve.url ? AUTH : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

/** Polls until `check` holds of the answer (the run goes on in the server, in its own time). */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function start(chain: string, input: unknown, runId: string, base = serve.url): Promise<void> {
  const started = await api('POST', '/api/runs', { chain, input, run_id: runId }, {}, base);
  expect(started.status).toBe(202);
}

const run = (id: string, base = serve.url) => api('GET', `/api/runs/${id}`, undefined, {}, base).then((r) => r.body);
const pending = (id: string) => api('GET', `/api/approvals?run=${id}`).then((r) => r.body.approvals as { id: string; run_id: string; prompt: string; tool?: string; args?: unknown }[]);

/** The event types of a run's SSE stream, read until its run:finished. */
async function eventTypes(id: string): Promise<string[]> {
  const res = await fetch(`${serve.url}/api/runs/${id}/events`, { headers: AUTH });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/event: run:finished\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

describe('events over HTTP', () => {
  it('wakes a wait_for run whose match the event meets, once per event id', async () => {
    await start('payment', { order: 'o-9' }, 'pay-1');
    const listed = await until(() => api('GET', '/api/runs?status=waiting').then((r) => r.body.runs as { run_id: string; waiting_for?: { kind: string; name?: string }[]; wake_at?: number | null }[]), (runs) => runs.some((r) => r.run_id === 'pay-1'), 'pay-1 to wait');
    const row = listed.find((r) => r.run_id === 'pay-1')!;
    expect(row.waiting_for).toEqual([expect.objectContaining({ kind: 'event', name: 'payment.settled', step: 'settled' })]);
    // Its timeout (1d) is when it is looked at again.
    expect(row.wake_at).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((await run('pay-1')).steps.settled.status).toBe('waiting');
    const stream = eventTypes('pay-1');

    const other = await api('POST', '/api/events', { name: 'payment.settled', payload: { order_id: 'o-other', amount: 1 } });
    expect(other).toEqual({ status: 202, body: { id: expect.any(String), new: true, delivered: [] } });
    const sent = await api('POST', '/api/events', { name: 'payment.settled', payload: { order_id: 'o-9', amount: 42 }, id: 'evt-9' });
    expect(sent).toEqual({ status: 202, body: { id: 'evt-9', new: true, delivered: ['pay-1'] } });
    const again = await api('POST', '/api/events', { name: 'payment.settled', payload: { order_id: 'o-9', amount: 42 }, id: 'evt-9' });
    expect(again).toEqual({ status: 202, body: { id: 'evt-9', new: false, delivered: [] } });

    const done = await until(() => run('pay-1'), (r) => r.status !== 'waiting' && r.status !== 'running', 'pay-1 to finish');
    expect(done).toMatchObject({ status: 'succeeded', outputs: { receipt: { order: 'o-9', amount: 42 } } });
    expect(done.waiting_for).toBeUndefined();
    const types = await stream;
    expect(types).toEqual(expect.arrayContaining(['step:waiting', 'run:waiting', 'run:woken', 'run:finished']));
    expect(types.indexOf('run:waiting')).toBeLessThan(types.indexOf('run:woken'));
  });

  it('refuses an event without a name, and unknown keys', async () => {
    expect((await api('POST', '/api/events', { payload: {} })).body.error.code).toBe('BAD_REQUEST');
    expect((await api('POST', '/api/events', { name: 'x', when: 1 })).body.error).toEqual({ code: 'BAD_REQUEST', message: "body has an unknown key 'when'" });
  });
});

describe('approvals over HTTP', () => {
  it("approves an approval step once, recording the server's name for the caller, not the body's", async () => {
    await start('ship', { order: 'o-5' }, 'ship-1');
    const [request] = await until(() => pending('ship-1'), (list) => list.length === 1, 'the approval request');
    expect(request).toMatchObject({ run_id: 'ship-1', prompt: 'Ship order o-5?', step: 'ok' });
    expect((await api('GET', '/api/approvals')).body.approvals.map((a: { id: string }) => a.id)).toContain(request!.id);
    expect((await run('ship-1')).waiting_for).toEqual([expect.objectContaining({ kind: 'approval', id: request!.id })]);
    const stream = eventTypes('ship-1');

    const claimed = await api('POST', `/api/approvals/${request!.id}`, { decision: 'approve', by: 'ada' });
    expect(claimed).toEqual({ status: 400, body: { error: { code: 'BAD_REQUEST', message: "body has an unknown key 'by'" } } });
    const bad = await api('POST', `/api/approvals/${request!.id}`, { decision: 'maybe' });
    expect(bad.body.error.code).toBe('BAD_REQUEST');

    const decided = await api('POST', `/api/approvals/${request!.id}`, { decision: 'approve', comment: 'ship it' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ id: request!.id, run_id: 'ship-1', decision: { approved: true, by: 'token', comment: 'ship it' } });
    const twice = await api('POST', `/api/approvals/${request!.id}`, { decision: 'deny' });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('APPROVAL_REFUSED');

    const done = await until(() => run('ship-1'), (r) => r.status === 'succeeded' || r.status === 'failed', 'ship-1 to finish');
    expect(done).toMatchObject({ status: 'succeeded', outputs: { decision: { approved: true, by: 'token', comment: 'ship it' } } });
    expect(await pending('ship-1')).toEqual([]);
    expect(await stream).toEqual(expect.arrayContaining(['approval:requested', 'run:waiting', 'approval:decided', 'run:woken', 'run:finished']));
  });

  it("denies a dangerous tool's call: the run fails with APPROVAL_DENIED and the tool never ran", async () => {
    await start('vault', { door: 'side' }, 'vault-1');
    const [request] = await until(() => pending('vault-1'), (list) => list.length === 1, 'the approval request');
    expect(request).toMatchObject({ tool: 'vault/open_vault', args: { door: 'side' } });
    const denied = await api('POST', `/api/approvals/${request!.id}`, { decision: 'deny', comment: 'not that door' });
    expect(denied.body.decision).toMatchObject({ approved: false, by: 'token', comment: 'not that door' });
    const done = await until(() => run('vault-1'), (r) => r.status === 'succeeded' || r.status === 'failed', 'vault-1 to finish');
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('APPROVAL_DENIED');
    expect(done.steps.open.output).toBeUndefined();
  });

  it('cancels a waiting run at once; resuming one is 409 RUN_WAITING', async () => {
    await start('ship', { order: 'o-c' }, 'ship-cancel');
    await until(() => pending('ship-cancel'), (list) => list.length === 1, 'the approval request');
    const resumed = await api('POST', '/api/runs/ship-cancel/resume');
    expect(resumed.status).toBe(409);
    expect(resumed.body.error.code).toBe('RUN_WAITING');
    const cancelled = await api('POST', '/api/runs/ship-cancel/cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect((await run('ship-cancel')).status).toBe('cancelled');
    expect(await pending('ship-cancel')).toEqual([]);
    expect((await api('GET', '/api/runs?status=cancelled')).body.runs.map((r: { run_id: string }) => r.run_id)).toContain('ship-cancel');
  });

  it('answers 404 APPROVAL_NOT_FOUND for an unknown request', async () => {
    const missing = await api('POST', '/api/approvals/ap_nothing_here', { decision: 'approve' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('APPROVAL_NOT_FOUND');
  });

  it('refuses a cross-site POST to decide, even with the token, and the request stays pending', async () => {
    await start('vault', { door: 'front' }, 'vault-csrf');
    const [request] = await until(() => pending('vault-csrf'), (list) => list.length === 1, 'the approval request');
    const foreign: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of foreign) {
      const refused = await api('POST', `/api/approvals/${request!.id}`, { decision: 'approve' }, headers);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('CROSS_SITE_REQUEST');
    }
    const sent = await api('POST', '/api/events', { name: 'payment.settled', payload: {} }, { origin: 'https://evil.example' });
    expect(sent.body.error.code).toBe('CROSS_SITE_REQUEST');
    const anonymous = await fetch(`${serve.url}/api/approvals/${request!.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"decision":"approve"}' });
    expect(anonymous.status).toBe(401);
    expect(await pending('vault-csrf')).toEqual([expect.objectContaining({ id: request!.id })]);
    expect((await run('vault-csrf')).status).toBe('waiting');
  });
});

describe('--approve TOOL', () => {
  it('is a standing approval: the call runs without asking', async () => {
    await start('vault', { door: 'back' }, 'vault-standing', standing.url);
    const done = await until(() => run('vault-standing', standing.url), (r) => r.status !== 'running', 'the run to finish');
    expect(done).toMatchObject({ status: 'succeeded', outputs: { opened: 'back' } });
    expect((await api('GET', '/api/approvals', undefined, {}, standing.url)).body).toEqual({ approvals: [] });
  });
});

describe('a waiting run across a restart of serve', () => {
  it('is read from the store, and woken by an event sent to the new server', async () => {
    const env = { TOOLCHAIN_STORE: `sqlite:${join(root, 'restart.db')}` };
    const first = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env });
    await start('payment', { order: 'o-r' }, 'pay-restart', first.url);
    await until(() => run('pay-restart', first.url), (r) => r.status === 'waiting', 'pay-restart to wait');
    expect(await first.stop()).toBe(0);

    const second = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env });
    try {
      const parked = await run('pay-restart', second.url);
      expect(parked).toMatchObject({ status: 'waiting', waiting_for: [expect.objectContaining({ kind: 'event', name: 'payment.settled' })] });
      expect(parked.steps.settled.status).toBe('waiting');
      const sent = await api('POST', '/api/events', { name: 'payment.settled', payload: { order_id: 'o-r', amount: 7 } }, {}, second.url);
      expect(sent.body.delivered).toEqual(['pay-restart']);
      const done = await until(() => run('pay-restart', second.url), (r) => r.status === 'succeeded' || r.status === 'failed', 'pay-restart to finish');
      expect(done).toMatchObject({ status: 'succeeded', outputs: { receipt: { order: 'o-r', amount: 7 } } });
    } finally {
      await second.stop();
    }
  }, 60_000);
});
