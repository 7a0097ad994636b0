import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type RunEvent } from '../../src/index.js';
import { agentChain } from '../fixtures/llm-agent/chains.js';
import { closeServed, serve } from '../fixtures/llm-agent/openai-server.js';

// Runs that wait, through the library with a real SQLite store: sleeps, events, approvals and
// dangerous calls decided later. Each behaviour is checked on what the store and the events
// say — the order things happened in, which calls ran, what was consumed — not on wall time.

const root = mkdtempSync(join(tmpdir(), 'toolchain-waits-'));
let n = 0;
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(closeServed);

async function engineOn(store: string, extra: Parameters<typeof createEngine>[0] = {}): Promise<Engine & { calls: string[] }> {
  const engine = await createEngine({ cache: 'off', store, wakeIntervalMs: 50, ...extra });
  engines.push(engine);
  const calls: string[] = [];
  engine.registerTool({ name: 'note', parameters: { type: 'object', properties: { text: {} } }, handler: (a: { text?: unknown }) => (calls.push(String(a.text)), { text: a.text }) });
  engine.registerTool({ name: 'ship', dangerous: true, parameters: { type: 'object', properties: { order: { type: 'integer' } }, required: ['order'] }, handler: (a: { order: number }) => (calls.push(`ship ${a.order}`), { shipped: a.order }) });
  return Object.assign(engine, { calls });
}

function newStore(): string {
  return `sqlite:${join(root, `runs-${++n}.db`)}`;
}

function recorder(): { events: RunEvent[]; onEvent: (e: RunEvent) => void; types: () => string[] } {
  const events: RunEvent[] = [];
  return { events, onEvent: (e) => void events.push(e), types: () => events.filter((e) => !('parent' in e) || e.parent === undefined).map((e) => e.type) };
}

/** Resolves once `engine` has an approval request pending (polling the store, as a person's page would). */
async function pendingApproval(engine: Engine): Promise<Awaited<ReturnType<Engine['approvals']['list']>>[number]> {
  for (;;) {
    const [first] = await engine.approvals.list();
    if (first !== undefined) return first;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('sleep', () => {
  it('parks the run, then goes on after the time, the steps before not run again', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(`name: nap
steps:
  - { name: before, tool: note, input_map: { text: before } }
  - { name: rest, sleep: 300ms }
  - { name: after, tool: note, input_map: { text: $.rest.slept_until } }
`);
    const r = recorder();
    const result = await engine.run('nap', {}, { onEvent: r.onEvent });
    expect(result.status).toBe('succeeded');
    expect(engine.calls[0]).toBe('before');
    expect(engine.calls).toHaveLength(2);
    const started = r.events.find((e) => e.type === 'run:started')!.timestamp;
    const slept = Date.parse(engine.calls[1]!);
    expect(slept - started).toBeGreaterThanOrEqual(300);
    expect(r.types()).toEqual(['run:started', 'step:started', 'step:succeeded', 'step:started', 'step:waiting', 'run:waiting', 'run:woken', 'run:started', 'step:started', 'step:succeeded', 'step:started', 'step:succeeded', 'run:finished']);
    const waiting = r.events.find((e) => e.type === 'run:waiting');
    expect(waiting).toMatchObject({ waits: [{ kind: 'sleep', step: 'rest', until: slept }], wake_at: slept });
  });

  it('holds nothing while it waits: the run is a record another engine on the store continues', async () => {
    const store = newStore();
    const first = await engineOn(store);
    first.addChain(`name: nap
steps:
  - { name: rest, sleep: 200ms }
  - { name: after, tool: note, input_map: { text: done } }
`);
    const parked = await first.run('nap', {}, { untilWaiting: true });
    expect(parked.status).toBe('waiting');
    expect(parked.error?.code).toBe('RUN_WAITING');
    expect(await first.runs.list({ status: 'waiting' })).toMatchObject([{ run_id: parked.run_id, status: 'waiting' }]);
    await first.close();

    const second = await engineOn(store, { timers: true });
    second.addChain(`name: nap
steps:
  - { name: rest, sleep: 200ms }
  - { name: after, tool: note, input_map: { text: done } }
`);
    for (let i = 0; i < 200 && (await second.runs.get(parked.run_id))?.status !== 'succeeded'; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await second.runs.get(parked.run_id))?.status).toBe('succeeded');
    expect(second.calls).toEqual(['done']);
  });

  it('a due run whose chain is added after the waker first looked is woken at once, not left alone', async () => {
    const store = newStore();
    const nap = `name: nap
steps:
  - { name: rest, sleep: 1ms }
  - { name: after, tool: note, input_map: { text: done } }
`;
    const first = await engineOn(store);
    first.addChain(nap);
    const parked = await first.run('nap', {}, { untilWaiting: true });
    await first.close();
    await new Promise((r) => setTimeout(r, 20)); // due now

    // The waker's first look finds the run but not its chain here, and leaves it; adding the chain ends that.
    const second = await engineOn(store, { timers: true });
    await new Promise((r) => setTimeout(r, 100));
    expect((await second.runs.get(parked.run_id))?.status).toBe('waiting');
    second.addChain(nap);
    for (let i = 0; i < 200 && (await second.runs.get(parked.run_id))?.status !== 'succeeded'; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await second.runs.get(parked.run_id))?.status).toBe('succeeded');
    expect(second.calls).toEqual(['done']);
  });

  it('sleep_until a time from the input; a time that is not a timestamp fails the step', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(`name: until
inputs: { at: string }
steps:
  - { name: rest, sleep_until: $.at }
outputs: { slept: $.rest.slept_until }
`);
    const at = new Date(Date.now() + 150).toISOString();
    expect(await engine.run('until', { at })).toMatchObject({ status: 'succeeded', outputs: { slept: at } });
    const bad = await engine.run('until', { at: 'tomorrow' });
    expect(bad.status).toBe('failed');
    expect(bad.error).toMatchObject({ code: 'VALIDATION_FAILED', step: 'rest' });
    expect(bad.error?.message).toContain('ISO 8601');
  });
});

describe('wait_for', () => {
  const CHAIN = `name: order
inputs: { order: integer }
steps:
  - name: paid
    wait_for: { event: payment.settled, match: { order: $.order } }
  - { name: after, tool: note, input_map: { text: $.paid.amount } }
outputs: { amount: $.after.text }
`;

  it('is woken by a matching event only; its payload is the output; an id sent twice is delivered once', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(CHAIN);
    const run7 = await engine.run('order', { order: 7 }, { untilWaiting: true });
    const run8 = await engine.run('order', { order: 8 }, { untilWaiting: true });
    expect([run7.status, run8.status]).toEqual(['waiting', 'waiting']);
    // Its wait is not over: resume is refused.
    expect((await engine.resume(run7.run_id)).error?.code).toBe('RUN_WAITING');
    expect(await engine.emit('payment.settled', { order: 9, amount: 1 })).toMatchObject({ new: true, delivered: [] });
    expect(await engine.emit('payment.settled', { order: 7, amount: 12 }, { id: 'pay-1' })).toMatchObject({ id: 'pay-1', new: true, delivered: [run7.run_id] });
    // The same id again, even with a payload that would match run 8: nothing is delivered.
    expect(await engine.emit('payment.settled', { order: 8, amount: 99 }, { id: 'pay-1' })).toMatchObject({ new: false, delivered: [] });
    const woken = await engine.resume(run7.run_id);
    expect(woken).toMatchObject({ status: 'succeeded', outputs: { amount: 12 } });
    expect((await engine.runs.get(run8.run_id))?.status).toBe('waiting');
    expect(engine.calls).toEqual(['12']);
  });

  it('does not see an event sent before the wait began', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(CHAIN);
    await engine.emit('payment.settled', { order: 5, amount: 3 });
    const run = await engine.run('order', { order: 5 }, { untilWaiting: true });
    expect(run.status).toBe('waiting');
  });

  it('fails with WAIT_TIMEOUT after its timeout; a retry waits again as a wait of its own', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(`name: late
steps:
  - name: paid
    wait_for: { event: never.comes, timeout: 100ms }
    retry: { max_attempts: 2, backoff: { initial: 10ms } }
`);
    const r = recorder();
    const result = await engine.run('late', {}, { onEvent: r.onEvent });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'WAIT_TIMEOUT', step: 'paid' });
    expect(result.steps.paid).toMatchObject({ status: 'failed', attempts: 2 });
    expect(r.events.filter((e) => e.type === 'run:waiting')).toHaveLength(2);
  });

  it('is cancelled while it waits: at once, as cancelled', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(CHAIN);
    const abort = new AbortController();
    const running = engine.run('order', { order: 1 }, { signal: abort.signal });
    for (let i = 0; i < 200 && (await engine.runs.list({ status: 'waiting' })).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect((await engine.runs.get(result.run_id))?.status).toBe('cancelled');
  });
});

describe('approval steps', () => {
  const CHAIN = `name: release
inputs: { version: string }
steps:
  - name: ok
    approval: { prompt: "Release {{ $.version }}?", approvers: [ada, grace] }
    on_error: continue
  - { name: after, tool: note, input_map: { text: $.ok } }
outputs: { decision: $.ok }
`;

  it('records the decider, the comment and the time; a second decision is refused', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(CHAIN);
    const r = recorder();
    const running = engine.run('release', { version: '2.0' }, { onEvent: r.onEvent });
    const request = await pendingApproval(engine);
    expect(request).toMatchObject({ chain: 'release', step: 'ok', prompt: 'Release 2.0?', approvers: ['ada', 'grace'] });
    expect(r.events.find((e) => e.type === 'approval:requested')).toMatchObject({ id: request.id, prompt: 'Release 2.0?' });
    await expect(engine.approvals.decide(request.id, { approved: true, by: 'mallory' })).rejects.toMatchObject({ code: 'APPROVAL_REFUSED' });
    const decided = await engine.approvals.decide(request.id, { approved: true, by: 'ada', comment: 'go' });
    expect(decided.decision).toMatchObject({ approved: true, by: 'ada', comment: 'go' });
    await expect(engine.approvals.decide(request.id, { approved: false, by: 'grace' })).rejects.toMatchObject({ code: 'APPROVAL_REFUSED' });
    await expect(engine.approvals.decide('ap_nothing', { approved: true, by: 'ada' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    const result = await running;
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toMatchObject({ decision: { approved: true, by: 'ada', comment: 'go' } });
    expect(Date.parse((result.outputs as { decision: { at: string } }).decision.at)).toBeGreaterThan(0);
    expect(await engine.approvals.list()).toEqual([]);
  });

  it('is counted in the metrics while it waits: runs waiting by chain and reason, approvals pending', async () => {
    const engine = await engineOn(newStore(), { observe: true });
    engine.addChain(CHAIN);
    const parked = await engine.run('release', { version: '1.0' }, { untilWaiting: true });
    expect(parked.status).toBe('waiting');
    const text = await engine.metrics();
    expect(text).toContain('toolchain_runs_waiting{chain="release",reason="approval"} 1');
    expect(text).toContain('toolchain_approvals_pending 1');
    expect(text).toContain('toolchain_runs_in_flight 0');
    const [request] = await engine.approvals.list();
    await engine.approvals.decide(request!.id, { approved: true, by: 'ada' });
    expect((await engine.resume(parked.run_id)).status).toBe('succeeded');
    const after = await engine.metrics();
    expect(after).toContain('toolchain_approvals_pending 0');
    expect(after).not.toContain('toolchain_runs_waiting{');
    // A run awaited through its wait is observed once per event: counted once when it ends.
    const awaited = engine.run('release', { version: '1.1' });
    const second = await pendingApproval(engine);
    await engine.approvals.decide(second.id, { approved: true, by: 'ada' });
    expect((await awaited).status).toBe('succeeded');
    const counted = await engine.metrics();
    expect(counted).toContain('toolchain_runs_total{chain="release",status="succeeded"} 2');
    expect(counted).toContain('toolchain_runs_in_flight 0');
    // A waiting run cancelled is counted once, as cancelled, and leaves nothing in flight.
    const third = await engine.run('release', { version: '1.2' }, { untilWaiting: true });
    expect(await engine.cancel(third.run_id)).toBe(true);
    const cancelled = await engine.metrics();
    expect(cancelled).toContain('toolchain_runs_total{chain="release",status="cancelled"} 1');
    expect(cancelled).toContain('toolchain_runs_in_flight 0');
  });

  it('a denial fails the step with APPROVAL_DENIED, naming who denied it (on_error applies)', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(CHAIN);
    const running = engine.run('release', { version: '3.0' });
    const request = await pendingApproval(engine);
    await engine.approvals.decide(request.id, { approved: false, by: 'grace', comment: 'not on a Friday' });
    const result = await running;
    expect(result.status).toBe('succeeded');
    const decision = (result.outputs as { decision: { error: { code: string; message: string } } }).decision;
    expect(decision.error.code).toBe('APPROVAL_DENIED');
    expect(decision.error.message).toContain('by grace: not on a Friday');
  });

  it('a request not decided within its timeout is denied', async () => {
    const engine = await engineOn(newStore());
    engine.addChain(`name: quick
steps:
  - { name: ok, approval: { prompt: "Now?", timeout: 100ms } }
`);
    const result = await engine.run('quick', {});
    expect(result.error).toMatchObject({ code: 'APPROVAL_DENIED', step: 'ok' });
    expect(result.error?.message).toContain('not decided before its timeout');
  });
});

describe('dangerous calls decided later', () => {
  const CHAIN = `name: ship_all
inputs: { orders: array }
steps:
  - { name: each, tool: ship, for_each: $.orders, input_map: { order: $.item } }
outputs: { shipped: $.each }
`;

  it('an approver answering wait makes each call a request with its validated arguments; only approved calls run', async () => {
    const engine = await engineOn(newStore(), { approve: () => 'wait' });
    engine.addChain(CHAIN);
    const running = engine.run('ship_all', { orders: ['1', 2] });
    let pending = await engine.approvals.list();
    for (let i = 0; i < 200 && pending.length < 2; i++) (await new Promise((r) => setTimeout(r, 10)), (pending = await engine.approvals.list()));
    // The arguments as validated: '1' coerced to the integer the tool declares.
    expect(pending.map((a) => [a.tool, a.args, a.step])).toEqual([
      ['ship', { order: 1 }, 'each[0]'],
      ['ship', { order: 2 }, 'each[1]'],
    ]);
    expect(engine.calls).toEqual([]);
    await engine.approvals.decide(pending[0]!.id, { approved: true, by: 'ada' });
    await engine.approvals.decide(pending[1]!.id, { approved: false, by: 'ada' });
    const result = await running;
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('APPROVAL_DENIED');
    expect(engine.calls).toEqual(['ship 1']);
  });

  it('a standing approval (true) needs no request; without an approver the call is refused as before', async () => {
    const allowed = await engineOn(newStore(), { approve: () => true });
    allowed.addChain(CHAIN);
    expect((await allowed.run('ship_all', { orders: [3] })).status).toBe('succeeded');
    const none = await engineOn(newStore());
    none.addChain(CHAIN);
    expect((await none.run('ship_all', { orders: [4] })).error?.code).toBe('APPROVAL_DENIED');
    expect(await none.approvals.list()).toEqual([]);
  });
});

describe('waits in sub-chains', () => {
  it("park the calling step; the sub-chain's finished steps are not run again", async () => {
    const engine = await engineOn(newStore());
    engine.addChain(`name: inner
steps:
  - { name: one, tool: note, input_map: { text: inner-one } }
  - { name: hold, wait_for: { event: go } }
  - { name: two, tool: note, input_map: { text: inner-two } }
`);
    engine.addChain(`name: outer
steps:
  - { name: sub, chain: inner }
  - { name: last, tool: note, input_map: { text: outer-last } }
`);
    const parked = await engine.run('outer', {}, { untilWaiting: true });
    expect(parked.status).toBe('waiting');
    expect(parked.steps.sub?.status).toBe('waiting');
    await engine.emit('go', {});
    const result = await engine.resume(parked.run_id);
    expect(result.status).toBe('succeeded');
    expect(engine.calls).toEqual(['inner-one', 'inner-two', 'outer-last']);
  });
});

describe("an agent's dangerous calls", () => {
  it("wait for the decision within the turn while the model's other calls go on", async () => {
    const fake = await serve((body, n) =>
      n === 0
        ? { content: null, tool_calls: [{ id: 'call_ship', name: 'ship', arguments: { order: 5 } }, { id: 'call_note', name: 'note', arguments: { text: 'meanwhile' } }] }
        : { content: `done: ${body.messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}` },
    );
    const engine = await engineOn(newStore(), { approve: () => 'wait' });
    engine.addChain(agentChain(fake.baseUrl, { tools: ['ship', 'note'] }));
    const running = engine.run('ask', { question: 'Ship order 5' });
    const request = await pendingApproval(engine);
    expect(request).toMatchObject({ tool: 'ship', args: { order: 5 }, step: 'agent›call_ship' });
    // The other call of the turn went on while this one waits.
    expect(engine.calls).toEqual(['meanwhile']);
    await engine.approvals.decide(request.id, { approved: true, by: 'ada' });
    const result = await running;
    expect(result.status).toBe('succeeded');
    expect(engine.calls).toEqual(['meanwhile', 'ship 5']);
    expect((result.outputs as { text: string }).text).toContain('shipped');
  });
});
