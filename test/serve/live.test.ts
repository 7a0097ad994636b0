import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { RunEvent } from '../../src/run-model/events.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { serveEngine } from '../helpers/serve-engine.js';
import { readSse } from '../helpers/sse-client.js';

// A real listening server: SSE replay and live ordering, cancel over HTTP, token auth on the
// wire, and `toolchain serve` as a process (graceful SIGTERM, refusing a public host without a token).

let engine: Engine;
let server: ToolchainServer;
let base: string;

beforeAll(async () => {
  engine = await serveEngine();
  server = await createServer(engine, { token: 'test-token-1' });
  base = await server.listen({ port: 0 });
});
afterAll(async () => {
  await server.close(0);
  await engine.close();
});

const auth = { authorization: 'Bearer test-token-1' };
async function post(path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, { method: 'POST', headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
}

describe('SSE', () => {
  it('replays past events, then streams live ones in order, and ends after run:finished', async () => {
    const { run_id } = (await (await post('/api/runs', { chain: 'slow', input: { ms: 300 } })).json()) as { run_id: string };
    const received: number[] = [];
    const live = await readSse(`${base}/api/runs/${run_id}/events`, auth, () => received.push(Date.now()));
    const events = live.map((m) => JSON.parse(m.data) as RunEvent);
    expect(events.map((e) => `${e.type}${'step' in e ? ` ${e.step}` : ''}`)).toEqual([
      'run:started',
      'step:started wait',
      'step:succeeded wait',
      'step:started after',
      'step:succeeded after',
      'run:finished',
    ]);
    expect(live.map((m) => m.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(live.map((m) => m.event)).toEqual(events.map((e) => e.type));
    expect(events.every((e) => e.run_id === run_id)).toBe(true);
    // The first two were replayed at once; the step's end came live, about 300 ms later.
    expect(received[2]! - received[1]!).toBeGreaterThan(150);
    // After the end: the same events, replayed, and the stream still ends.
    const again = await readSse(`${base}/api/runs/${run_id}/events`, auth);
    expect(again).toEqual(live);
    // A client that reconnects with Last-Event-ID gets only what it missed.
    const rest = await readSse(`${base}/api/runs/${run_id}/events`, { ...auth, 'last-event-id': '4' });
    expect(rest.map((m) => m.id)).toEqual(['5', '6']);
  });

  it("includes a sub-chain's events, marked with their parent", async () => {
    const { run_id } = (await (await post('/api/runs?wait=true', { chain: 'nested' })).json()) as { run_id: string };
    const events = (await readSse(`${base}/api/runs/${run_id}/events`, auth)).map((m) => JSON.parse(m.data) as RunEvent);
    const sub = events.filter((e) => e.parent !== undefined);
    expect(sub.length).toBe(8);
    expect(sub.every((e) => e.parent!.run_id === run_id && e.parent!.step === 'inner')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'run:finished', run_id, status: 'succeeded' });
    const detail = (await (await fetch(`${base}/api/runs/${run_id}`, { headers: auth })).json()) as { steps: Record<string, { status: string }> };
    expect(Object.keys(detail.steps).sort()).toEqual(['done', 'inner', 'inner›a', 'inner›b', 'inner›c']);
  });

  it('cancel over HTTP ends a run whose events a client is following', async () => {
    const { run_id } = (await (await post('/api/runs', { chain: 'slow', input: { ms: 30_000 } })).json()) as { run_id: string };
    const following = readSse(`${base}/api/runs/${run_id}/events`, auth);
    await new Promise((r) => setTimeout(r, 100));
    const cancel = await post(`/api/runs/${run_id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ status: 'cancelled' });
    const events = (await following).map((m) => JSON.parse(m.data) as RunEvent);
    expect(events.at(-2)).toMatchObject({ type: 'step:failed', step: 'wait', error: { code: 'ABORTED' } });
    expect(events.at(-1)).toMatchObject({ type: 'run:finished', status: 'cancelled', error: { code: 'ABORTED' } });
  });

  it('sends keep-alive comments while a run is quiet', async () => {
    const chatty = await createServer(engine, { heartbeatMs: 40 });
    try {
      const url = await chatty.listen({ port: 0 });
      const { run_id } = (await (await fetch(`${url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain":"slow","input":{"ms":300}}' })).json()) as { run_id: string };
      const text = await (await fetch(`${url}/api/runs/${run_id}/events`)).text();
      expect(text.match(/^: keep-alive$/gm)?.length).toBeGreaterThanOrEqual(3);
      expect(text).toMatch(/event: run:finished\n/);
    } finally {
      await chatty.close(0);
    }
  });

  it('shutdown ends open event streams and cancels runs that outlast the grace period', async () => {
    const other = await createServer(engine);
    const url = await other.listen({ port: 0 });
    const { run_id } = (await (await fetch(`${url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain":"slow","input":{"ms":600000}}' })).json()) as { run_id: string };
    const following = readSse(`${url}/api/runs/${run_id}/events`);
    await new Promise((r) => setTimeout(r, 100));
    // The run naps far past the test's timeout: close ends only because it cancels it after 200 ms.
    await other.close(200);
    const events = await following;
    expect(events[0]!.event).toBe('run:started');
    const run = await other.service.get(run_id);
    expect(run).toMatchObject({ status: 'cancelled', steps: { wait: { status: 'failed', error: { code: 'ABORTED' } } } });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('needs the token on the wire too', async () => {
    expect((await fetch(`${base}/api/runs`)).status).toBe(401);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/api/runs/x/events`)).status).toBe(401);
  });
});

describe('toolchain serve (process)', () => {
  const project = join(REPO, 'test', 'fixtures', 'serve', 'project');

  it('refuses a non-loopback host without a token, and a short token', async () => {
    const open = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { cwd: project, env: { TOOLCHAIN_TOKEN: '' } });
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/USAGE refusing to listen on 0\.0\.0\.0 without a token/);
    const short = await runCli(['serve', '--token', 'abc'], { cwd: project });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 8 characters/);
  });

  it('serves until SIGTERM, lets a request in flight finish, logs JSON lines and exits 0; shows runs `toolchain run` recorded and counts its own', async () => {
    const store = `sqlite:${join(await mkdtemp(join(tmpdir(), 'tc-serve-')), 'runs.db')}`;
    const earlier = await runCli(['run', 'nap', '--input', 'ms=1', '--store', store], { cwd: project });
    expect(earlier.code).toBe(0);
    const earlierId = /^run (\S+)/m.exec(earlier.stderr)?.[1];
    expect(earlierId).toBeDefined();
    const child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'serve', '--port', '0', '--no-watch', '--store', store], { cwd: project, env: { ...process.env, TOOLCHAIN_TOKEN: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /inspector at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const listed = (await (await fetch(`${url}/api/runs`)).json()) as { runs: { run_id: string; status: string }[] };
    expect(listed.runs).toContainEqual(expect.objectContaining({ run_id: earlierId, status: 'succeeded' }));
    expect(await (await fetch(`${url}/api/runs/${earlierId}`)).json()).toMatchObject({ chain: 'nap', status: 'succeeded', outputs: { slept: 1 } });
    await fetch(`${url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'nap', input: { ms: 1 } }) });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    // Counted once, though both the engine and the HTTP service see the run's events.
    expect(metrics).toMatch(/^toolchain_runs_total\{chain="nap",status="succeeded"\} 1$/m);
    const inFlight = fetch(`${url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'nap', input: { ms: 600 } }) });
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ chain: 'nap', status: 'succeeded', outputs: { slept: 600 } });
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/SIGTERM: finishing requests in flight/);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.source === 'tool')).toContainEqual(expect.objectContaining({ msg: 'sleeping', step: 'sleep', ms: 600 }));
    expect(lines.filter((l) => l.event === 'run:finished')).toHaveLength(2);
  });
});
