import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureCode } from '../../src/common/errors.js';
import type { ChainPlan } from '../../src/compiler/plan.js';
import type { Engine } from '../../src/engine/engine.js';
import type { RunEvent } from '../../src/run-model/events.js';
import { createRunMetrics } from '../../src/observe/index.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { serveEngine } from '../helpers/serve-engine.js';

// The metric names and labels, and their values after known runs.

/** The value of one sample in Prometheus text, by metric name and (a subset of) its labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('metrics from synthetic events', () => {
  const plan = { name: 'c', steps: [{ name: 's', target: { kind: 'tool', tool: 'tool_x' }, index: 0 }, { name: 'sub', target: { kind: 'chain', chain: 'other' }, index: 1 }] } as unknown as ChainPlan;
  const plans = { chain: (n: string) => (n === 'c' ? plan : undefined) };
  const base = { run_id: 'r1', chain: 'c', timestamp: 0 } as const;
  const finished = (status: 'succeeded' | 'failed', duration_ms: number, code?: string): RunEvent =>
    status === 'succeeded'
      ? { ...base, type: 'step:succeeded', step: 's', index: 0, status, attempt: 1, attempts: 1, output: {}, started_at: 0, duration_ms }
      : { ...base, type: 'step:failed', step: 's', index: 0, status, attempt: 1, attempts: 1, error: { code: failureCode(code ?? 'X'), message: '' }, started_at: 0, duration_ms };

  it('puts step durations in the right histogram buckets and counts calls', async () => {
    const m = createRunMetrics(plans);
    m.onEvent({ ...base, type: 'run:started', input: {} });
    for (const ms of [0.5, 3, 3, 40, 2000]) m.onEvent(finished('succeeded', ms));
    m.onEvent(finished('failed', 120, 'CIRCUIT_OPEN'));
    m.onEvent({ ...base, type: 'step:retrying', step: 's', index: 0, attempt: 1, error: { code: 'TIMEOUT', message: '' }, duration_ms: 5, delay_ms: 10 });
    m.onEvent({ ...base, type: 'step:failed', step: 's', index: 0, status: 'failed', attempt: 1, attempts: 1, error: { code: 'VALIDATION_FAILED', message: '' }, started_at: 0, duration_ms: 1 });
    const text = await m.text();
    const bucket = (le: string): number | undefined => sample(text, 'toolchain_step_duration_seconds_bucket', { chain: 'c', tool: 'tool_x', le });
    expect([bucket('0.001'), bucket('0.005'), bucket('0.01'), bucket('0.05'), bucket('0.1'), bucket('0.25'), bucket('1'), bucket('2.5'), bucket('+Inf')]).toEqual([2, 4, 4, 5, 5, 6, 6, 7, 7]);
    expect(sample(text, 'toolchain_step_duration_seconds_count', { chain: 'c', tool: 'tool_x' })).toBe(7);
    expect(sample(text, 'toolchain_step_duration_seconds_sum', { chain: 'c', tool: 'tool_x' })).toBeCloseTo(2.1675, 6);
    expect(sample(text, 'toolchain_steps_total', { chain: 'c', step: 's', tool: 'tool_x', status: 'succeeded' })).toBe(5);
    expect(sample(text, 'toolchain_steps_total', { chain: 'c', step: 's', tool: 'tool_x', status: 'failed' })).toBe(2);
    // 5 ok; errors: the CIRCUIT_OPEN failure and the TIMEOUT retry (VALIDATION_FAILED never reached the tool).
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'tool_x', status: 'ok' })).toBe(5);
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'tool_x', status: 'error' })).toBe(2);
    expect(sample(text, 'toolchain_circuit_open', { tool: 'tool_x' })).toBe(1);
    expect(sample(text, 'toolchain_runs_in_flight')).toBe(1);
    m.onEvent(finished('succeeded', 1));
    m.onEvent({ ...base, type: 'run:finished', status: 'cancelled', duration_ms: 9, outputs: null, error: { code: 'ABORTED', message: 'cancelled' } });
    const after = await m.text();
    expect(sample(after, 'toolchain_circuit_open', { tool: 'tool_x' })).toBe(0);
    expect(sample(after, 'toolchain_runs_in_flight')).toBe(0);
    expect(sample(after, 'toolchain_runs_total', { chain: 'c', status: 'cancelled' })).toBe(1);
  });

  it('each metrics object has its own registry', async () => {
    const a = createRunMetrics(plans);
    const b = createRunMetrics(plans);
    a.onEvent({ ...base, type: 'run:started', input: {} });
    expect(sample(await a.text(), 'toolchain_runs_in_flight')).toBe(1);
    expect(sample(await b.text(), 'toolchain_runs_in_flight')).toBe(0);
  });
});

describe('GET /metrics after known runs', () => {
  let engine: Engine;
  let server: ToolchainServer;
  beforeAll(async () => {
    engine = await serveEngine();
    server = await createServer(engine);
  });
  afterAll(async () => {
    await server.close();
    await engine.close();
  });
  const post = (url: string, body?: unknown) => server.app.inject({ method: 'POST', url, headers: { host: 'localhost' }, ...(body ? { payload: body as object } : {}) });

  it('counts runs, steps and tool calls by their labels', async () => {
    for (let i = 0; i < 3; i++) await post('/api/runs?wait=true', { chain: 'three_noop' });
    await post('/api/runs?wait=true', { chain: 'failing' });
    await post('/api/runs?wait=true', { chain: 'flaky' });
    await post('/api/runs?wait=true', { chain: 'nested' });
    expect((await post('/api/runs', { chain: 'no_such_chain' })).statusCode).toBe(400);
    const { run_id } = (await post('/api/runs', { chain: 'slow', input: { ms: 5000 } })).json() as { run_id: string };
    const during = (await server.app.inject({ method: 'GET', url: '/metrics', headers: { host: 'localhost' } })).body;
    expect(sample(during, 'toolchain_runs_in_flight')).toBe(1);
    await post(`/api/runs/${run_id}/cancel`);

    const res = await server.app.inject({ method: 'GET', url: '/metrics', headers: { host: 'localhost' } });
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(sample(text, 'toolchain_runs_total', { chain: 'three_noop', status: 'succeeded' })).toBe(3);
    expect(sample(text, 'toolchain_runs_total', { chain: 'failing', status: 'failed' })).toBe(1);
    expect(sample(text, 'toolchain_runs_total', { chain: 'flaky', status: 'succeeded' })).toBe(1);
    expect(sample(text, 'toolchain_runs_total', { chain: 'slow', status: 'cancelled' })).toBe(1);
    expect(sample(text, 'toolchain_runs_total', { chain: 'nested', status: 'succeeded' })).toBe(1);
    expect(sample(text, 'toolchain_runs_in_flight')).toBe(0);
    // three_noop ran 3 times on its own and once as nested's sub-chain.
    expect(sample(text, 'toolchain_steps_total', { chain: 'three_noop', step: 'a', tool: 'noop', status: 'succeeded' })).toBe(4);
    expect(sample(text, 'toolchain_steps_total', { chain: 'nested', step: 'inner', tool: 'chain:three_noop', status: 'succeeded' })).toBe(1);
    expect(sample(text, 'toolchain_steps_total', { chain: 'failing', step: 'explode', tool: 'boom', status: 'failed' })).toBe(1);
    expect(sample(text, 'toolchain_steps_total', { chain: 'slow', step: 'wait', tool: 'sleep', status: 'failed' })).toBe(1);
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'noop', status: 'ok' })).toBe(13);
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'fail_times', status: 'error' })).toBe(2);
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'fail_times', status: 'ok' })).toBe(1);
    // explode once, rescued twice before its fixed fallback output.
    expect(sample(text, 'toolchain_tool_calls_total', { tool: 'boom', status: 'error' })).toBe(3);
    expect(sample(text, 'toolchain_step_duration_seconds_count', { chain: 'three_noop', tool: 'noop' })).toBe(12);
    expect(sample(text, 'toolchain_step_duration_seconds_bucket', { chain: 'three_noop', tool: 'noop', le: '+Inf' })).toBe(12);
    expect(text).not.toContain('no_such_chain');
    expect(text).toContain('# TYPE toolchain_step_duration_seconds histogram');
    expect(text).toContain('# TYPE toolchain_steps_total counter');
    expect(await server.metrics()).toBe(text);
  });
});

describe('createEngine({ observe: true })', () => {
  it("counts every run the engine makes, with the caller's onEvent still called, and refuses metrics() without it", async () => {
    const { createEngine } = await import('../../src/engine/engine.js');
    const engine = await createEngine({ cache: 'off', observe: true });
    engine.registerTool({ name: 'echo', parameters: { type: 'object' }, handler: (args: unknown) => args });
    engine.addChain('version: "1"\nname: c\nsteps:\n  - name: s\n    tool: echo\n');
    const seen: string[] = [];
    await engine.run('c', {}, { onEvent: (e) => seen.push(e.type) });
    await engine.run('c', {});
    await engine.run('nope', {});
    const text = await engine.metrics();
    expect(sample(text, 'toolchain_runs_total', { chain: 'c', status: 'succeeded' })).toBe(2);
    expect(sample(text, 'toolchain_steps_total', { chain: 'c', step: 's', status: 'succeeded' })).toBe(2);
    // A name that is no chain never becomes a label.
    expect(text).not.toContain('nope');
    expect(seen).toEqual(['run:started', 'step:started', 'step:succeeded', 'run:finished']);
    await engine.close();
    const plain = await createEngine({ cache: 'off' });
    await expect(plain.metrics()).rejects.toMatchObject({ code: 'USAGE' });
    await plain.close();
  });
});
