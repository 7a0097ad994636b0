import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';
import type { PrivateRedis } from '../fixtures/store/private-redis.js';
import { privateQueueRedis, startWorker, until, FIXTURE } from '../helpers/queue-cluster.js';

// What one request could make `toolchain serve` do: `GET /api/runs/ID` answered every step's
// output whole (a run with large outputs was a 40 MB answer) and the replay of its events had
// every output again (84 MB); a `for_each` over an input the request sent fanned out to as many
// elements as it held (a 1 MiB array: 7 s of CPU, 100–240 MB); runs submitted with `--queue` were
// not counted against the runs in flight; and one stored run that could not be read failed the
// whole `GET /api/runs`. Answers now leave large values out with a marker naming their size and
// their route, a for_each past the server's limit fails FOR_EACH_TOO_LARGE, queued runs count,
// and the list names the unreadable runs next to the readable ones.

const BIG = 300_000;
const CHAIN = `name: big
inputs:
  n: { type: integer, default: 3 }
  items: { type: array, default: [1, 2, 3] }
steps:
  - { name: a, tool: blob, input_map: { bytes: ${BIG} } }
  - { name: small, tool: blob, input_map: { bytes: 10 } }
  - name: fan
    tool: blob
    for_each: $.items
    input_map: { bytes: 50000 }
outputs: { a: $.a, fan: $.fan }
`;

const inject = (server: ToolchainServer, url: string, method: 'GET' | 'POST' = 'GET', payload?: object) =>
  server.app.inject({ method, url, ...(payload ? { payload } : {}), headers: { host: '127.0.0.1:7300' } });

async function bigEngine(options: Parameters<typeof createEngine>[0] = {}): Promise<Engine> {
  const engine = await createEngine({ cache: 'off', ...options });
  engine.registerTool({ name: 'blob', parameters: { type: 'object', properties: { bytes: { type: 'integer' } } }, handler: (args) => 'x'.repeat(Number(args.bytes)) });
  engine.addChain(CHAIN, 'big.yaml');
  engine.addChain(`name: outer\nsteps:\n  - { name: inner, chain: big, input_map: { items: [] } }\noutputs: { a: $.inner.a }\n`, 'outer.yaml');
  return engine;
}

/** The SSE answer's events, as JSON. */
function sseEvents(body: string): Array<Record<string, unknown> & { type: string }> {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown> & { type: string });
}

describe('a run with large outputs, over HTTP', () => {
  let engine: Engine;
  let server: ToolchainServer;
  let runId: string;
  beforeAll(async () => {
    engine = await bigEngine();
    server = await createServer(engine, { webRoot: false });
    const res = await inject(server, '/api/runs?wait=true', 'POST', { chain: 'big' });
    expect(res.statusCode).toBe(200);
    runId = (res.json() as { run_id: string }).run_id;
  });
  afterAll(async () => {
    await server.close(0);
    await engine.close();
  });

  it('GET /api/runs/ID leaves a step output over value-bytes out, with its size and the route that has it', async () => {
    const res = await inject(server, `/api/runs/${runId}`);
    expect(res.statusCode).toBe(200);
    // The three 50 KB elements (each under value-bytes) and the small values: not the 300 KB nor the 150 KB array.
    expect(res.body.length).toBeLessThan(200 * 1024);
    const run = res.json() as { steps: Record<string, Record<string, unknown>>; outputs_truncated?: { bytes: number; href: string } };
    expect(run.steps.a).not.toHaveProperty('output');
    expect(run.steps.a!.output_truncated).toEqual({ bytes: BIG + 2, href: `/api/runs/${runId}/steps/a` });
    expect(run.steps.small!.output).toBe('x'.repeat(10));
    expect(run.steps.fan!.output_truncated).toEqual({ bytes: 3 * 50_002 + 4, href: `/api/runs/${runId}/steps/fan` });
    expect(run.outputs_truncated).toEqual({ bytes: expect.any(Number), href: `/api/runs/${runId}/outputs` });

    const step = await inject(server, run.steps.a!.output_truncated ? (run.steps.a!.output_truncated as { href: string }).href : '');
    expect(step.statusCode).toBe(200);
    expect((step.json() as { key: string; status: string; output: string })).toMatchObject({ key: 'a', status: 'succeeded', output: 'x'.repeat(BIG) });
    const outputs = (await inject(server, run.outputs_truncated!.href)).json() as { outputs: { a: string; fan: string[] } };
    expect(outputs.outputs.a.length).toBe(BIG);
    expect(outputs.outputs.fan).toHaveLength(3);
  });

  it('a for_each element is a step of its own on that route; an unknown key is 404 STEP_NOT_FOUND', async () => {
    const element = (await inject(server, `/api/runs/${runId}/steps/${encodeURIComponent('fan[1]')}`)).json() as { output: string };
    expect(element.output.length).toBe(50_000);
    const unknown = await inject(server, `/api/runs/${runId}/steps/nope`);
    expect(unknown.statusCode).toBe(404);
    expect((unknown.json() as { error: { code: string } }).error.code).toBe('STEP_NOT_FOUND');
  });

  it('the event replay carries markers instead of the large outputs', async () => {
    const res = await inject(server, `/api/runs/${runId}/events`);
    expect(res.statusCode).toBe(200);
    expect(res.body.length).toBeLessThan(64 * 1024);
    const events = sseEvents(res.body);
    const a = events.find((e) => e.type === 'step:succeeded' && e.step === 'a')!;
    expect(a).not.toHaveProperty('output');
    expect(a.output_truncated).toEqual({ bytes: BIG + 2, href: `/api/runs/${runId}/steps/a` });
    expect(events.find((e) => e.type === 'step:succeeded' && e.step === 'small')!.output).toBe('x'.repeat(10));
    expect(events.at(-1)).toMatchObject({ type: 'run:finished', outputs_truncated: { href: `/api/runs/${runId}/outputs` } });
  });

  it("a sub-chain's step is keyed parent›step on the route, in the view and in the events", async () => {
    const res = await inject(server, '/api/runs?wait=true', 'POST', { chain: 'outer' });
    const id = (res.json() as { run_id: string }).run_id;
    const key = 'inner›a';
    const href = `/api/runs/${id}/steps/${encodeURIComponent(key)}`;
    const run = (await inject(server, `/api/runs/${id}`)).json() as { steps: Record<string, Record<string, unknown>> };
    expect(run.steps[key]!.output_truncated).toEqual({ bytes: BIG + 2, href });
    const events = sseEvents((await inject(server, `/api/runs/${id}/events`)).body);
    expect(events.find((e) => e.type === 'step:succeeded' && e.step === 'a')!.output_truncated).toEqual({ bytes: BIG + 2, href });
    // The sub-chain's outputs are its parent step's output.
    expect(events.find((e) => e.type === 'run:finished' && e.parent !== undefined)!.outputs_truncated).toMatchObject({ href: `/api/runs/${id}/steps/inner` });
    expect(((await inject(server, href)).json() as { output: string }).output.length).toBe(BIG);
  });

  it('past answer-bytes, values are left out even when each is under value-bytes', async () => {
    const tight = await createServer(engine, { webRoot: false, limits: { valueBytes: 1024 * 1024, answerBytes: 120 * 1024 } });
    try {
      const run = (await inject(tight, `/api/runs/${runId}`)).json() as { steps: Record<string, Record<string, unknown>> };
      const whole = Object.entries(run.steps).filter(([, s]) => s.output !== undefined).map(([k]) => k);
      const marked = Object.entries(run.steps).filter(([, s]) => s.output_truncated !== undefined).map(([k]) => k);
      // 120 KiB of values: `a` (300 KB) never fits; of the 50 KB elements, two do.
      expect(marked).toContain('a');
      expect(whole).toContain('small');
      expect(whole.filter((k) => k.startsWith('fan['))).toHaveLength(2);
      expect(marked.filter((k) => k.startsWith('fan['))).toHaveLength(1);
    } finally {
      await tight.close(0);
    }
  });
});

describe('a for_each over an input sent over HTTP (toolchain serve from bin/)', () => {
  it('fails FOR_EACH_TOO_LARGE naming the step and the limit, before any element runs', async () => {
    const dir = await tempDir('toolchain-serve-fan-');
    const chain = `name: fan\ninputs:\n  items: { type: array }\nsteps:\n  - { name: each, tool: text/word_stats, for_each: $.items, input_map: { text: $.item } }\noutputs: { n: $.each }\n`;
    await writeFiles(dir, { 'chains/fan.yaml': chain });
    const serve = await startServe({ cwd: dir, globals: ['--chains', 'chains', '--plugins', join(REPO, 'plugins')], args: ['--no-watch', '--store', 'memory:', '--limit', 'for-each-elements=50'], env: { TOOLCHAIN_TOKEN: '' } });
    try {
      const post = (items: unknown[]) =>
        fetch(`${serve.url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'fan', input: { items } }) }).then(
          async (r) => (await r.json()) as { status: string; error?: { code: string; message: string }; steps?: Record<string, { status: string }> },
        );
      const refused = await post(Array.from({ length: 51 }, () => 'a b'));
      expect(refused.status).toBe('failed');
      expect(refused.error?.code).toBe('FOR_EACH_TOO_LARGE');
      expect(refused.error?.message).toContain("step 'each'");
      expect(refused.error?.message).toContain('51 elements, more than the 50');
      const ok = await post(Array.from({ length: 50 }, () => 'a b'));
      expect(ok.status).toBe('succeeded');
    } finally {
      await serve.stop();
      await removeDir(dir);
    }
  }, 60_000);
});

describe('GET /api/runs over a SQLite store with one row damaged by hand', () => {
  let dir: string;
  let engine: Engine;
  let server: ToolchainServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolchain-serve-corrupt-'));
    const file = join(dir, 'runs.db');
    engine = await bigEngine({ store: `sqlite:${file}` });
    server = await createServer(engine, { webRoot: false });
    for (const id of ['run-a', 'run-b', 'run-c']) {
      expect((await inject(server, '/api/runs?wait=true', 'POST', { chain: 'big', run_id: id, input: { items: [] } })).statusCode).toBe(200);
    }
    const db = new Sqlite(file);
    db.prepare("UPDATE runs SET input = '{not json' WHERE id = 'run-b'").run();
    db.close();
  });
  afterAll(async () => {
    await server?.close(0);
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the readable runs and names the unreadable one, without the store address', async () => {
    const res = await inject(server, '/api/runs');
    expect(res.statusCode).toBe(200);
    const body = res.json() as { runs: { run_id: string }[]; unreadable: { id?: string; code: string; message: string }[] };
    expect(body.runs.map((r) => r.run_id).sort()).toEqual(['run-a', 'run-c']);
    expect(body.unreadable).toHaveLength(1);
    expect(body.unreadable[0]).toMatchObject({ id: 'run-b', code: 'STORE_CORRUPT' });
    expect(body.unreadable[0]!.message).toMatch(/^run run-b cannot be read: its input is not JSON/);
    expect(body.unreadable[0]!.message).not.toContain(dir);
  });
});

describe('runs submitted with --queue count against runs-in-flight', () => {
  let redis: PrivateRedis;
  let engine: Engine;
  let server: ToolchainServer;
  beforeAll(async () => {
    redis = await privateQueueRedis();
    engine = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
    server = await createServer(engine, { webRoot: false, limits: { maxRunsInFlight: 2, retryAfterS: 3 } });
  });
  afterAll(async () => {
    await server?.close(0);
    await engine?.close();
    await redis?.destroy();
  });

  it('a third submission while two wait for a worker is 429 TOO_MANY_RUNS; once they finished one is taken again', async () => {
    for (const start of [1, 2]) expect((await inject(server, '/api/runs', 'POST', { chain: 'five', input: { start } })).statusCode).toBe(202);
    const refused = await inject(server, '/api/runs', 'POST', { chain: 'five', input: { start: 3 } });
    expect(refused.statusCode).toBe(429);
    expect((refused.json() as { error: { code: string } }).error.code).toBe('TOO_MANY_RUNS');
    expect(refused.headers['retry-after']).toBe('3');
    // A worker takes the two; once the store has their ends, the server has room again.
    const worker = startWorker({ queue: redis.url });
    try {
      await worker.ready;
      await until('a submission is taken again', async () => (await inject(server, '/api/runs', 'POST', { chain: 'five', input: { start: 4 } })).statusCode === 202, 30_000, 250);
    } finally {
      worker.kill('SIGKILL');
      await worker.exited;
    }
  }, 60_000);

  it('a worker started with --for-each-elements refuses a larger for_each of a run submitted over HTTP', async () => {
    const worker = startWorker({ queue: redis.url, args: ['--for-each-elements', '5'] });
    try {
      await worker.ready;
      const res = await inject(server, '/api/runs?wait=true', 'POST', { chain: 'spread', input: { n: 6 } });
      expect(res.statusCode).toBe(200);
      const result = res.json() as { status: string; error?: { code: string; message: string } };
      expect(result.error?.code).toBe('FOR_EACH_TOO_LARGE');
      expect(result.error?.message).toContain("step 'each'");
      expect(result.error?.message).toContain('6 elements, more than the 5');
    } finally {
      worker.kill('SIGKILL');
      await worker.exited;
    }
  }, 60_000);
});
