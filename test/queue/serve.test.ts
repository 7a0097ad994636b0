import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import type { PrivateRedis } from '../fixtures/store/private-redis.js';
import { FIXTURE, privateQueueRedis, startWorker, until, type WorkerProcess } from '../helpers/queue-cluster.js';

// `toolchain serve --queue`: runs started over HTTP go to the workers; the
// server shows them from the shared store like any run.

let redis: PrivateRedis;
let worker: WorkerProcess;
let engine: Engine;
let server: ToolchainServer;

beforeAll(async () => {
  redis = await privateQueueRedis();
  worker = startWorker({ queue: redis.url, args: ['--stalled-interval', '1s'] });
  await worker.ready;
  engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
  server = await createServer(engine, {});
});

afterAll(async () => {
  await server?.close(0);
  await engine?.close();
  worker?.kill('SIGKILL');
  await worker?.exited;
  await redis?.destroy();
});

const inject = (method: 'GET' | 'POST', url: string, body?: unknown) =>
  server.app.inject({ method, url, ...(body !== undefined ? { payload: body as object } : {}), headers: { host: '127.0.0.1:7300' } });

describe('serve with a queue', () => {
  it('POST /api/runs?wait=true runs the chain on a worker and answers its RunResult', async () => {
    const res = await inject('POST', '/api/runs?wait=true', { chain: 'five', input: { start: 1 }, run_id: 'served-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ run_id: 'served-1', chain: 'five', status: 'succeeded', outputs: { value: 6 } });
    const detail = (await inject('GET', '/api/runs/served-1')).json() as { steps: Record<string, { output: { pid: number } }> };
    expect(detail.steps.s1!.output.pid).toBe(worker.pid);
  });

  it('POST /api/runs answers 202 at once; the run shows in the list and finishes on the worker', async () => {
    const res = await inject('POST', '/api/runs', { chain: 'five', input: { start: 10, ms: 50 } });
    expect(res.statusCode).toBe(202);
    const { run_id } = res.json() as { run_id: string };
    await until('the run finished', async () => ((await inject('GET', `/api/runs/${run_id}`)).json() as { status: string }).status === 'succeeded', 10_000);
    const { runs } = (await inject('GET', '/api/runs')).json() as { runs: { run_id: string; status: string }[] };
    expect(runs.find((r) => r.run_id === run_id)).toMatchObject({ status: 'succeeded' });
  });

  it('an unknown chain is a 400 with its code; a resume of an unknown run a 404', async () => {
    const res = await inject('POST', '/api/runs', { chain: 'nope' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'CHAIN_NOT_FOUND' } });
    expect((await inject('POST', '/api/runs/nothing-here/resume')).statusCode).toBe(404);
  });
});
