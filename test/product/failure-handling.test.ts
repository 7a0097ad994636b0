import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/registry/types.js';
import { createServer } from '../../src/serve/index.js';
import { engineWith, eventLog } from '../fixtures/executor/setup.js';
import { DRIVERS } from '../fixtures/store/drivers.js';

// on_failure, compensations and finally, through engine.run with tools that write what they were
// asked to do into one journal: the order of the journal is the order things happened in.

function journalTools() {
  const journal: string[] = [];
  const failing = new Map<string, number>();
  const tool = (name: string): ToolDefinition => ({
    name,
    handler: async (args) => {
      const what = typeof args.what === 'string' ? args.what : name;
      const left = failing.get(what) ?? 0;
      if (left !== 0) {
        failing.set(what, left - 1);
        journal.push(`${what}!`);
        throw Object.assign(new Error(`${what} failed`), { code: 'TOLD_TO_FAIL' });
      }
      journal.push(what);
      return { id: `${what}-id`, got: args };
    },
  });
  return { journal, failing, tools: ['act', 'undo', 'note'].map(tool) };
}

const SAGA = `name: saga
inputs:
  who: { type: string, default: ann }
steps:
  - name: flight
    tool: act
    input_map: { what: flight }
    compensate: { tool: undo, input_map: { what: "cancel {{ $.this.id }}", by: $.this_input.what } }
  - name: hotel
    tool: act
    input_map: { what: hotel }
    compensate: { tool: undo, input_map: { what: "cancel {{ $.this.id }}" }, retry: { max_attempts: 2, backoff: { initial: 1ms } } }
  - name: car
    tool: act
    input_map: { what: car }
    compensate: { tool: undo, input_map: { what: "cancel {{ $.this.id }}" } }
  - name: charge
    tool: act
    input_map: { what: charge }
on_failure:
  - name: tell
    tool: note
    input_map: { what: "failed at {{ $.error.step }} with {{ $.error.code }} after {{ $.flight.id }} for {{ $.who }}" }
finally:
  - name: first_end
    tool: note
    input_map: { what: "end1 {{ $.status }}" }
  - name: second_end
    tool: note
    parallel: true
    input_map: { what: "end2 {{ $.status }}" }
`;

describe('failure handling through engine.run', () => {
  it('on_failure reads the error, compensations run last-first, then finally', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    const engine = await engineWith(j.tools, [SAGA]);
    const log = eventLog();
    const result = await engine.run('saga', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'charge' });
    expect(j.journal).toEqual(['flight', 'hotel', 'car', 'charge!', 'failed at charge with TOLD_TO_FAIL after flight-id for ann', 'cancel car-id', 'cancel hotel-id', 'cancel flight-id', 'end1 failed', 'end2 failed']);
    expect(result.steps['flight~compensate']).toMatchObject({ status: 'succeeded' });
    expect(result.steps.tell).toMatchObject({ status: 'succeeded' });
    expect(log.events.at(-1)).toMatchObject({ type: 'run:finished', status: 'failed' });
    expect(log.events.filter((e) => e.type === 'run:finished')).toHaveLength(1);
    expect(log.events.filter((e) => e.type === 'run:started')).toHaveLength(1);
    await engine.close();
  });

  it('a compensation that fails once is retried by its own retry: the run ends failed', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    j.failing.set('cancel hotel-id', 1);
    const engine = await engineWith(j.tools, [SAGA]);
    const result = await engine.run('saga', {});
    expect(result.status).toBe('failed');
    expect(result.steps['hotel~compensate']).toMatchObject({ status: 'succeeded', attempts: 2, phase: 'compensate' });
    expect(j.journal.slice(5, 9)).toEqual(['cancel car-id', 'cancel hotel-id!', 'cancel hotel-id', 'cancel flight-id']);
    await engine.close();
  });

  it('a compensation that fails for good: compensation_failed, and the others still run', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    j.failing.set('cancel car-id', -1);
    const engine = await engineWith(j.tools, [SAGA]);
    const log = eventLog();
    const result = await engine.run('saga', {}, { onEvent: log.onEvent });
    expect(result.status).toBe('compensation_failed');
    expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'charge' });
    expect(result.steps['car~compensate']).toMatchObject({ status: 'failed', error: { code: 'TOLD_TO_FAIL' } });
    expect(result.steps['flight~compensate']).toMatchObject({ status: 'succeeded' });
    expect(j.journal.slice(5)).toEqual(['cancel car-id!', 'cancel hotel-id', 'cancel flight-id', 'end1 compensation_failed', 'end2 compensation_failed']);
    expect(log.events.at(-1)).toMatchObject({ type: 'run:finished', status: 'compensation_failed' });
    const failed = log.events.find((e) => e.type === 'step:failed' && e.step === 'car~compensate');
    expect(failed).toMatchObject({ phase: 'compensate', index: 0 });
    await engine.close();
  });

  it('a failing finally step stops neither the others nor changes the status or the error', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    j.failing.set('end1 failed', -1);
    const engine = await engineWith(j.tools, [SAGA]);
    const result = await engine.run('saga', {});
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'charge' });
    expect(result.steps.first_end).toMatchObject({ status: 'failed', phase: 'finally' });
    expect(result.steps.second_end).toMatchObject({ status: 'succeeded', phase: 'finally' });
    expect(j.journal.at(-1)).toBe('end2 failed');
    await engine.close();
  });

  it('a run that succeeds runs finally only, and keeps its outputs', async () => {
    const j = journalTools();
    const engine = await engineWith(j.tools, [SAGA]);
    const result = await engine.run('saga', {});
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toMatchObject({ id: 'charge-id' });
    expect(j.journal).toEqual(['flight', 'hotel', 'car', 'charge', 'end1 succeeded', 'end2 succeeded']);
    expect(result.steps.tell).toBeUndefined();
    await engine.close();
  });

  it('a cancelled run runs finally (status cancelled), neither on_failure nor compensations', async () => {
    const j = journalTools();
    const slow: ToolDefinition = { name: 'slow', handler: (_args, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error))) };
    const chain = SAGA.replace('  - name: charge\n    tool: act\n    input_map: { what: charge }', '  - name: charge\n    tool: slow');
    const engine = await engineWith([...j.tools, slow], [chain]);
    const controller = new AbortController();
    const running = engine.run('saga', {}, { signal: controller.signal, onEvent: (e) => void (e.type === 'step:started' && e.step === 'charge' && controller.abort()) });
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(j.journal).toEqual(['flight', 'hotel', 'car', 'end1 cancelled', 'end2 cancelled']);
    await engine.close();
  });

  it('with a SQLite store: resume of a compensation_failed run runs again only the compensation that failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-saga-'));
    try {
      const j = journalTools();
      j.failing.set('charge', -1);
      j.failing.set('cancel hotel-id', 2);
      const engine = await engineWith(j.tools, [SAGA], { store: `sqlite:${join(dir, 'runs.db')}` });
      const first = await engine.run('saga', {}, { runId: 'saga-1' });
      expect(first.status).toBe('compensation_failed');
      const before = j.journal.length;
      const again = await engine.resume('saga-1');
      expect(again.status).toBe('failed');
      expect(again.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'charge' });
      // Only the failed compensation, then the finally steps (which ran, and succeeded, before: restored).
      expect(j.journal.slice(before)).toEqual(['cancel hotel-id']);
      const detail = await engine.runs.get('saga-1');
      expect(detail?.status).toBe('failed');
      expect(Object.keys(detail!.steps)).not.toContain('~end');
      expect(detail!.steps['hotel~compensate']).toMatchObject({ status: 'succeeded', phase: 'compensate' });
      expect(detail!.steps.tell).toMatchObject({ status: 'succeeded', phase: 'on_failure' });
      await engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run parked on a sleep has not ended: finally runs once, after it is woken and its steps are done', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-saga-wait-'));
    try {
      const j = journalTools();
      const engine = await engineWith(j.tools, [`name: nap
steps:
  - { name: before, tool: act, input_map: { what: before } }
  - { name: rest, sleep: 200ms }
  - { name: after, tool: act, input_map: { what: after } }
finally:
  - { name: end, tool: note, input_map: { what: "end {{ $.status }}" } }
`], { store: `sqlite:${join(dir, 'runs.db')}`, wakeIntervalMs: 50, cache: 'off' });
      const log = eventLog();
      const result = await engine.run('nap', {}, { onEvent: log.onEvent });
      expect(result.status).toBe('succeeded');
      expect(result.steps.end).toMatchObject({ status: 'succeeded', phase: 'finally' });
      expect(j.journal).toEqual(['before', 'after', 'end succeeded']);
      const trace = log.trace((e) => e.type === 'run:waiting' || e.type === 'run:woken' || (e.type === 'step:started' && e.step === 'end'));
      expect(trace).toEqual(['run:waiting', 'run:woken', 'step:started end']);
      await engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a sub-chain handles its own failure inside the step that runs it: COMPENSATION_FAILED, recorded under the step', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    j.failing.set('cancel car-id', -1);
    const outer = `name: outer
steps:
  - name: deposit
    tool: act
    input_map: { what: deposit }
    compensate: { tool: undo, input_map: { what: "return {{ $.this.id }}" } }
  - name: trip
    chain: saga
`;
    const engine = await engineWith(j.tools, [SAGA, outer]);
    const result = await engine.run('outer', {});
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'COMPENSATION_FAILED', step: 'trip' });
    expect(result.error!.message).toContain("'car~compensate'");
    expect(result.steps['deposit~compensate']).toMatchObject({ status: 'succeeded' });
    // The sub-chain's handlers ran first (inside its step), then the outer run's compensation.
    expect(j.journal.slice(-4)).toEqual(['cancel flight-id', 'end1 compensation_failed', 'end2 compensation_failed', 'return deposit-id']);
    await engine.close();
  });

  it('a tool a handler needs that is not installed fails the run before a step runs', async () => {
    const j = journalTools();
    const engine = await engineWith(j.tools.filter((tool) => tool.name !== 'undo'), [SAGA]);
    const result = await engine.run('saga', {});
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('TOOL_NOT_FOUND');
    expect(result.error?.message).toContain("'undo'");
    expect(j.journal).toEqual([]);
    await engine.close();
  });

  it('metrics count handler failures by phase, and runs by their new status', async () => {
    const j = journalTools();
    j.failing.set('charge', -1);
    j.failing.set('cancel car-id', -1);
    j.failing.set('end1 compensation_failed', -1);
    const engine = await engineWith(j.tools, [SAGA], { observe: true });
    await engine.run('saga', {});
    const text = await engine.metrics();
    expect(text).toContain('toolchain_handler_failures_total{chain="saga",phase="compensate"} 1');
    expect(text).toContain('toolchain_handler_failures_total{chain="saga",phase="finally"} 1');
    expect(text).toContain('toolchain_runs_total{chain="saga",status="compensation_failed"} 1');
    // A handler step is counted under its own name and tool, not as the main step with its index.
    expect(text).toContain('toolchain_steps_total{chain="saga",step="car~compensate",tool="undo",status="failed"} 1');
    expect(text).toContain('toolchain_steps_total{chain="saga",step="tell",tool="note",status="succeeded"} 1');
    expect(text).toContain('toolchain_steps_total{chain="saga",step="flight",tool="act",status="succeeded"} 1');
    await engine.close();
  });

  it('the HTTP API: ?status=compensation_failed, handler steps with their phase, for a run started here and for one read from the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-saga-api-'));
    const store = `sqlite:${join(dir, 'runs.db')}`;
    try {
      const j = journalTools();
      j.failing.set('charge', -1);
      j.failing.set('cancel car-id', -1);
      // One run by another engine on the same store, then one through the server.
      const other = await engineWith(j.tools, [SAGA], { store });
      expect((await other.run('saga', {}, { runId: 'elsewhere' })).status).toBe('compensation_failed');
      await other.close();
      const engine = await engineWith(j.tools, [SAGA], { store });
      const server = await createServer(engine, {});
      const inject = (method: 'GET' | 'POST', url: string, body?: object) => server.app.inject({ method, url, ...(body ? { payload: body } : {}), headers: { host: '127.0.0.1:7300' } });
      try {
        const started = await inject('POST', '/api/runs?wait=true', { chain: 'saga', run_id: 'here' });
        expect(started.json()).toMatchObject({ run_id: 'here', status: 'compensation_failed', steps: { 'car~compensate': { status: 'failed', phase: 'compensate' } } });
        const list = await inject('GET', '/api/runs?status=compensation_failed');
        expect((list.json() as { runs: { run_id: string; status: string }[] }).runs.map((r) => [r.run_id, r.status]).sort()).toEqual([['elsewhere', 'compensation_failed'], ['here', 'compensation_failed']]);
        expect((await inject('GET', '/api/runs?status=compensated')).statusCode).toBe(400);
        for (const id of ['here', 'elsewhere']) {
          const detail = (await inject('GET', `/api/runs/${id}`)).json() as { status: string; steps: Record<string, { status: string; phase?: string; input?: unknown; timeline: unknown[] }> };
          expect(detail.status, id).toBe('compensation_failed');
          expect(detail.steps['car~compensate'], id).toMatchObject({ status: 'failed', phase: 'compensate' });
          expect(detail.steps['flight~compensate'], id).toMatchObject({ status: 'succeeded', phase: 'compensate', input: { what: 'cancel flight-id', by: 'flight' } });
          expect(detail.steps.tell, id).toMatchObject({ status: 'succeeded', phase: 'on_failure' });
          expect(detail.steps.first_end, id).toMatchObject({ status: 'succeeded', phase: 'finally', input: { what: 'end1 compensation_failed' } });
          expect(detail.steps.flight, id).toMatchObject({ status: 'succeeded', input: { what: 'flight' } });
          expect(detail.steps.flight!.phase, id).toBeUndefined();
          expect(Object.keys(detail.steps), id).not.toContain('~end');
        }
      } finally {
        await server.close();
        await engine.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a cancel that comes while the failure handling runs', () => {
  for (const store of ['memory', 'sqlite'] as const) {
    it(`is not heard (${store}): every compensation and finally step runs, the run ends failed`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'toolchain-saga-cancel-'));
      try {
        const j = journalTools();
        j.failing.set('charge', -1);
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        let holding: () => void = () => undefined;
        const reached = new Promise<void>((resolve) => (holding = resolve));
        // The car's cancellation waits until the test has asked for the run to be cancelled.
        const slowUndo: ToolDefinition = {
          name: 'undo',
          handler: async (args) => {
            if (args.what === 'cancel car-id') {
              holding();
              await held;
            }
            j.journal.push(String(args.what));
            return {};
          },
        };
        const engine = await engineWith([...j.tools.filter((tool) => tool.name !== 'undo'), slowUndo], [SAGA], store === 'sqlite' ? { store: `sqlite:${join(dir, 'runs.db')}`, leaseMs: 300 } : {});
        try {
          const running = engine.run('saga', {}, { runId: `cancelled-${store}` });
          await reached;
          expect(await engine.cancel(`cancelled-${store}`)).toBe(true);
          // Long enough for the owner to hear of the cancel from the store (it looks every lease/3).
          await new Promise((r) => setTimeout(r, 300));
          release();
          const result = await running;
          expect(result.status).toBe('failed');
          expect(result.error).toMatchObject({ code: 'TOLD_TO_FAIL', step: 'charge' });
          expect(j.journal.slice(-5)).toEqual(['cancel car-id', 'cancel hotel-id', 'cancel flight-id', 'end1 failed', 'end2 failed']);
        } finally {
          await engine.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('compensation_failed in every store driver', () => {
  for (const driver of DRIVERS) {
    it(`${driver.name}: recorded, listed by status, and resumed into failed once the compensation succeeds`, async () => {
      const ns = driver.namespace();
      try {
        const store = await ns.open();
        const j = journalTools();
        j.failing.set('charge', -1);
        j.failing.set('cancel hotel-id', 2);
        const engine = await engineWith(j.tools, [SAGA], { store });
        try {
          expect((await engine.run('saga', {}, { runId: 'saga-x' })).status).toBe('compensation_failed');
          expect((await store.getRun('saga-x'))?.status).toBe('compensation_failed');
          expect((await store.listRuns({ status: 'compensation_failed' })).map((r) => r.id)).toEqual(['saga-x']);
          expect(await store.listRuns({ status: 'failed' })).toEqual([]);
          const before = j.journal.length;
          expect((await engine.resume('saga-x')).status).toBe('failed');
          expect(j.journal.slice(before)).toEqual(['cancel hotel-id']);
          expect((await store.getRun('saga-x'))?.status).toBe('failed');
          expect((await store.listRuns({ status: 'failed' })).map((r) => r.id)).toEqual(['saga-x']);
        } finally {
          await engine.close();
        }
      } finally {
        await ns.drop();
      }
    });
  }
});

