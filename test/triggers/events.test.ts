import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { compileChain, createEngine, type Engine, type TriggerEvent } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import type { Clock, TimerHandle } from '../../src/common/clock.js';

// Event triggers through real engines and real stores, on a test clock: an event starts one run
// per trigger whose name and match it meets, named by the event; a repeated id starts nothing;
// engines sharing a store make one run of an event; a waiting run and a trigger both receive the
// same event; events recorded while no engine ran are caught up (bounded); overlap; and what
// `compileChain` says of a bad event or webhook trigger.

function handClock(start: number): Clock & { add(ms: number): void } {
  let now = start;
  return { now: () => now, setTimeout: (): TimerHandle => 0, clearTimeout: (): void => undefined, add: (ms) => void (now += ms) };
}

const T0 = Date.parse('2026-12-01T05:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'toolchain-event-triggers-'));
const engines: Engine[] = [];
const stores: RunStore[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const s of stores.splice(0)) await s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function sqliteStore(): Promise<{ url: string; store: RunStore }> {
  const url = `sqlite:${join(dir, `runs-${++files}.db`)}`;
  const store = await openStore(url);
  stores.push(store);
  return { url, store };
}

interface Options {
  readonly events?: TriggerEvent[];
  readonly observe?: boolean;
  readonly clock?: Clock;
  readonly hold?: (() => void)[];
}

async function engineOn(store: RunStore, chain: string, o: Options = {}): Promise<Engine> {
  const engine = await createEngine({ store, clock: o.clock ?? handClock(T0), triggers: true, timers: true, triggerIntervalMs: 2 ** 30, wakeIntervalMs: 2 ** 30, cache: 'off', ...(o.observe ? { observe: true } : {}), onTrigger: (e) => o.events?.push(e) });
  engines.push(engine);
  engine.registerTool({ name: 'echo', parameters: { type: 'object' }, handler: (args) => args });
  const hold = o.hold;
  engine.registerTool({ name: 'hold', parameters: { type: 'object' }, handler: () => new Promise((resolve) => (hold ?? []).push(() => resolve({ ok: true }))) });
  engine.addChain(chain, 'c.yaml');
  return engine;
}

async function settle(store: RunStore): Promise<void> {
  for (let i = 0; i < 1000 && (await store.listRuns({ status: 'running' })).length > 0; i++) await new Promise((r) => setTimeout(r, 2));
}

async function ids(store: RunStore, chain = 'orders'): Promise<string[]> {
  return (await store.listRuns({ chain, limit: 1000 })).map((r) => r.id).sort();
}

const ORDERS = (extra = '', trigger = '  - event: order.created\n') => `name: orders\ninputs:\n  order: { type: object, default: {} }\n  event_id: { type: string, default: "" }\ntriggers:\n${trigger}    input_map: { order: $.event.payload, event_id: $.event.id }\n${extra}steps:\n  - name: s\n    tool: echo\n    input_map: { order: $.order }\n`;

describe('an event trigger', () => {
  it('starts one run per event, named by the event and given its payload; another name or a repeated id starts nothing', async () => {
    const { store } = await sqliteStore();
    const events: TriggerEvent[] = [];
    const engine = await engineOn(store, ORDERS(), { events });
    await engine.triggers.fireDue();
    await engine.emit('order.created', { id: 7 }, { id: 'o-7' });
    await engine.emit('order.paid', { id: 7 }, { id: 'p-7' });
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@o-7']);
    expect((await store.getRun('orders#1@o-7'))!.input).toEqual({ order: { id: 7 }, event_id: 'o-7' });
    expect(events).toMatchObject([{ type: 'trigger:fired', chain: 'orders', trigger: '1', event_id: 'o-7', run_id: 'orders#1@o-7' }]);
    // The same id again: the store keeps the first, nothing is fired.
    expect((await engine.emit('order.created', { id: 8 }, { id: 'o-7' })).new).toBe(false);
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@o-7']);
    expect(events).toHaveLength(1);
  });

  it('names a run by a hash of an event id that is no run id (a colon, a space, too long), the same in every process', async () => {
    const { store } = await sqliteStore();
    const engine = await engineOn(store, ORDERS());
    await engine.triggers.fireDue();
    await engine.emit('order.created', { id: 1 }, { id: 'order:42 from shop' });
    await engine.emit('order.created', { id: 2 }, { id: 'sha256-looks-hashed' });
    await engine.triggers.fireDue();
    await settle(store);
    const made = await ids(store);
    expect(made).toHaveLength(2);
    for (const id of made) expect(id).toMatch(/^orders#1@sha256-[0-9a-f]{32}$/);
    const run = (await store.listRuns({ chain: 'orders' })).find((r) => (r.input as { event_id: string }).event_id === 'order:42 from shop')!;
    expect(run.id).toBe('orders#1@sha256-' + (await import('node:crypto')).createHash('sha256').update('order:42 from shop').digest('hex').slice(0, 32));
  });

  it('fires for the events whose payload meets its match only', async () => {
    const { store } = await sqliteStore();
    const engine = await engineOn(store, ORDERS('', '  - event: order.created\n    match: { region: eu, priority: 1 }\n'));
    await engine.triggers.fireDue();
    await engine.emit('order.created', { region: 'eu', priority: 1, id: 1 }, { id: 'a' });
    await engine.emit('order.created', { region: 'us', priority: 1 }, { id: 'b' });
    await engine.emit('order.created', { region: 'eu', priority: '1' }, { id: 'c' });
    await engine.emit('order.created', 'not an object', { id: 'd' });
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@a']);
  });

  it('two engines on one SQLite store make one run of an event', async () => {
    const { url, store } = await sqliteStore();
    const other = await openStore(url);
    stores.push(other);
    const events: TriggerEvent[] = [];
    const [a, b] = [await engineOn(store, ORDERS(), { events }), await engineOn(other, ORDERS(), { events })];
    await Promise.all([a.triggers.fireDue(), b.triggers.fireDue()]);
    for (let i = 0; i < 5; i++) await a.emit('order.created', { n: i }, { id: `o-${i}` });
    await Promise.all([a.triggers.fireDue(), b.triggers.fireDue()]);
    await Promise.all([a.triggers.fireDue(), b.triggers.fireDue()]);
    await settle(store);
    expect(await ids(store)).toEqual([0, 1, 2, 3, 4].map((i) => `orders#1@o-${i}`));
    expect(events.filter((e) => e.type === 'trigger:fired')).toHaveLength(5);
  });

  it('a run waiting for the event and a trigger on it both receive it', async () => {
    const { store } = await sqliteStore();
    const engine = await engineOn(store, ORDERS());
    engine.addChain('name: payer\nsteps:\n  - name: wait\n    wait_for: { event: order.created, match: { id: 9 } }\n  - name: after\n    tool: echo\n    input_map: { got: $.wait }\n', 'payer.yaml');
    await engine.triggers.fireDue();
    const waiting = await engine.submit('payer', {}, { untilWaiting: true });
    expect((await waiting.result()).status).toBe('waiting');
    const sent = await engine.emit('order.created', { id: 9 }, { id: 'o-9' });
    expect(sent.delivered).toEqual([waiting.runId]);
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@o-9']);
    expect((await store.getRun('orders#1@o-9'))!.status).toBe('succeeded');
    // The waiting run is woken here (timers) and goes on with the payload as its wait's output.
    for (let i = 0; i < 500 && (await engine.runs.get(waiting.runId))!.status !== 'succeeded'; i++) await new Promise((r) => setTimeout(r, 5));
    const run = (await engine.runs.get(waiting.runId))!;
    expect(run.status).toBe('succeeded');
    expect(run.steps.wait!.output).toEqual({ id: 9 });
  });
});

describe('events recorded while no engine ran', () => {
  /** An engine handles o-1; then, while none runs, o-2, o-3 and o-4 are recorded; a new engine starts. */
  async function restart(extra: string): Promise<string[]> {
    const { url, store } = await sqliteStore();
    const first = await engineOn(store, ORDERS(extra));
    await first.triggers.fireDue();
    await first.emit('order.created', {}, { id: 'o-1' });
    await first.triggers.fireDue();
    await settle(store);
    await first.close();
    engines.splice(engines.indexOf(first), 1);
    // Sent by an engine that fires no triggers, as `toolchain emit` does: recorded, nothing started.
    const sender = await createEngine({ store: url, cache: 'off', clock: handClock(T0 + 1000) });
    engines.push(sender);
    for (const id of ['o-2', 'o-3', 'o-4']) await sender.emit('order.created', {}, { id });
    const second = await engineOn(store, ORDERS(extra));
    await second.triggers.fireDue();
    await settle(store);
    await second.triggers.fireDue();
    await settle(store);
    return (await ids(store)).map((id) => id.slice(id.indexOf('@') + 1));
  }

  it('all (the default) fires each of them', async () => {
    expect(await restart('')).toEqual(['o-1', 'o-2', 'o-3', 'o-4']);
  });

  it('latest fires the newest only, none fires none', async () => {
    expect(await restart('    catchup: latest\n')).toEqual(['o-1', 'o-4']);
    expect(await restart('    catchup: none\n')).toEqual(['o-1']);
  });

  it('a trigger with no run yet starts from now: events before it are not its', async () => {
    const { store } = await sqliteStore();
    const before = await engineOn(store, 'name: other\nsteps:\n  - name: s\n    tool: echo\n');
    await before.emit('order.created', {}, { id: 'old' });
    const engine = await engineOn(store, ORDERS());
    await engine.triggers.fireDue();
    await engine.emit('order.created', {}, { id: 'new' });
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@new']);
  });

  it('catches up at most the newest 100 events of its name', async () => {
    const { url, store } = await sqliteStore();
    const first = await engineOn(store, ORDERS());
    await first.triggers.fireDue();
    await first.emit('order.created', {}, { id: 'seen' });
    await first.triggers.fireDue();
    await settle(store);
    await first.close();
    engines.splice(engines.indexOf(first), 1);
    // None of the newest 100 has a run of the trigger: those recorded since its newest run started are missed.
    const sender = await createEngine({ store: url, cache: 'off', clock: handClock(T0 + 1000) });
    engines.push(sender);
    for (let i = 0; i < 130; i++) await sender.emit('order.created', {}, { id: `m-${i}` });
    const second = await engineOn(store, ORDERS());
    await second.triggers.fireDue();
    await settle(store);
    const made = await ids(store);
    expect(made).toHaveLength(101);
    expect(made).toContain('orders#1@m-129');
    expect(made).toContain('orders#1@m-30');
    expect(made).not.toContain('orders#1@m-29');
  });
});

describe('overlap of event triggers', () => {
  async function gated(overlap: string, events: TriggerEvent[]) {
    const { store } = await sqliteStore();
    const hold: (() => void)[] = [];
    const engine = await engineOn(store, `name: orders\ntriggers:\n  - event: order.created\n    overlap: ${overlap}\nsteps:\n  - name: s\n    tool: hold\n`, { events, hold });
    await engine.triggers.fireDue();
    const send = async (id: string): Promise<void> => {
      await engine.emit('order.created', {}, { id });
      await engine.triggers.fireDue();
    };
    const release = async (): Promise<void> => {
      hold.shift()!();
      for (let i = 0; i < 1000 && (await store.listRuns({ status: 'running' })).length > hold.length; i++) await new Promise((r) => setTimeout(r, 2));
    };
    return { store, engine, send, release, hold };
  }

  it('allow (the default) starts a run for every event at once', async () => {
    const { store, send } = await gated('allow', []);
    await send('a');
    await send('b');
    await send('c');
    expect((await store.listRuns({ status: 'running' })).length).toBe(3);
  });

  it('skip drops an event while a run of the trigger goes', async () => {
    const events: TriggerEvent[] = [];
    const { store, send, release } = await gated('skip', events);
    await send('a');
    await send('b');
    await release();
    await send('c');
    expect(await ids(store)).toEqual(['orders#1@a', 'orders#1@c']);
    expect(events.map((e) => `${e.type} ${'event_id' in e ? e.event_id : ''}${'reason' in e ? ` ${e.reason}` : ''}`)).toEqual(['trigger:fired a', 'trigger:skipped b overlap', 'trigger:fired c']);
  });

  it('queue starts the events that came meanwhile one after the other', async () => {
    const { store, engine, send, release, hold } = await gated('queue', []);
    await send('a');
    await send('b');
    await send('c');
    expect(await ids(store)).toEqual(['orders#1@a']);
    await release();
    await engine.triggers.fireDue();
    expect(await ids(store)).toEqual(['orders#1@a', 'orders#1@b']);
    expect(hold.length).toBe(1);
    await release();
    await engine.triggers.fireDue();
    expect(await ids(store)).toEqual(['orders#1@a', 'orders#1@b', 'orders#1@c']);
  });
});

describe('what an engine says of its event triggers', () => {
  it('lists them with their event, and counts fires and refusals in the metric', async () => {
    const { store } = await sqliteStore();
    const events: TriggerEvent[] = [];
    const engine = await engineOn(store, 'name: orders\ninputs:\n  n: integer\ntriggers:\n  - event: order.created\n    input_map: { n: $.event.payload.n }\n  - event: order.created\n    id: disabled\n    enabled: false\n    input: { n: 1 }\nsteps:\n  - name: s\n    tool: echo\n', { events, observe: true });
    await engine.triggers.fireDue();
    await engine.emit('order.created', { n: 1 }, { id: 'good' });
    await engine.emit('order.created', { n: 'one' }, { id: 'bad' });
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@good']);
    expect(events.map((e) => `${e.type} ${'event_id' in e ? e.event_id : ''}`)).toEqual(['trigger:fired good', 'trigger:skipped bad']);
    const metrics = await engine.metrics();
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="orders",trigger="1",outcome="fired"} 1');
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="orders",trigger="1",outcome="refused"} 1');
    const views = await engine.triggers.list();
    expect(views).toEqual([
      { chain: 'orders', id: '1', kind: 'event', event: 'order.created', enabled: true, catchup: 'all', overlap: 'allow', next: [], last: { run_id: 'orders#1@good', started_at: expect.any(String), status: 'succeeded' } },
      { chain: 'orders', id: 'disabled', kind: 'event', event: 'order.created', enabled: false, catchup: 'all', overlap: 'allow', next: [] },
    ]);
  });

  it('an edited event starts the trigger from the reload', async () => {
    const chainDir = mkdtempSync(join(dir, 'chains-'));
    const file = join(chainDir, 'orders.yaml');
    writeFileSync(file, ORDERS());
    const { store } = await sqliteStore();
    const engine = await createEngine({ chainsDir: chainDir, store, clock: handClock(T0), triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off' });
    engines.push(engine);
    engine.registerTool({ name: 'echo', parameters: { type: 'object' }, handler: (args) => args });
    await engine.triggers.fireDue();
    await engine.emit('order.created', {}, { id: 'a' });
    await engine.triggers.fireDue();
    writeFileSync(file, ORDERS('', '  - event: order.paid\n'));
    await engine.reloadChains();
    await engine.emit('order.created', {}, { id: 'b' });
    await engine.emit('order.paid', {}, { id: 'c' });
    await engine.triggers.fireDue();
    await settle(store);
    expect(await ids(store)).toEqual(['orders#1@a', 'orders#1@c']);
  });
});

describe('event and webhook triggers in a chain file', () => {
  const diag = (triggers: string, inputs = '') =>
    compileChain(`name: n\n${inputs}triggers:\n${triggers}steps:\n  - name: s\n    sleep: 1ms\n`, { file: 'c.yaml' }).diagnostics.map((d) => ({ code: d.code, line: d.line, col: d.col, message: d.message, suggestion: d.suggestion }));

  it('compile with their defaults: catchup all and overlap allow for events; a webhook with its limits', () => {
    const { plan, diagnostics } = compileChain('name: n\ntriggers:\n  - event: order.created\n    match: { region: eu }\n  - webhook: { path: github, signature: github, secret_env: GH_SECRET }\n  - webhook: { path: shop/hooks, signature: hmac-sha256, secret_env: SHOP_SECRET, header: X-Signature, id_header: X-Delivery, max_body_bytes: 2048 }\n  - webhook: { path: stripe, signature: stripe, secret_env: STRIPE_SECRET, tolerance: 1m }\nsteps:\n  - name: s\n    sleep: 1ms\n', { file: 'c.yaml' });
    expect(diagnostics).toEqual([]);
    expect(plan!.triggers).toMatchObject([
      { id: '1', kind: 'event', event: 'order.created', match: { region: 'eu' }, catchup: 'all', overlap: 'allow' },
      { id: '2', kind: 'webhook', webhook: { path: 'github', signature: 'github', secretEnv: 'GH_SECRET', toleranceMs: 300_000, maxBodyBytes: 1_048_576 }, catchup: 'none', overlap: 'allow' },
      { id: '3', kind: 'webhook', webhook: { path: 'shop/hooks', signature: 'hmac-sha256', header: 'x-signature', idHeader: 'x-delivery', maxBodyBytes: 2048 } },
      { id: '4', kind: 'webhook', webhook: { signature: 'stripe', toleranceMs: 60_000 } },
    ]);
  });

  it('refuses two kinds at once, a match with a path in it, and keys of another kind at the key', () => {
    expect(diag('  - event: a\n    every: 1h\n')).toMatchObject([{ code: 'BAD_TRIGGER', line: 3, message: expect.stringContaining("has 'every' and 'event'") }]);
    expect(diag('  - event: a\n    match: { order: $.order.id }\n')).toMatchObject([{ code: 'BAD_TRIGGER', line: 4, col: 21, message: expect.stringContaining('with literals, not $.order.id') }]);
    expect(diag('  - every: 1h\n    match: { a: 1 }\n')).toMatchObject([{ code: 'BAD_TRIGGER', line: 4, col: 5 }]);
    expect(diag('  - event: a\n    timezone: Europe/Paris\n')).toMatchObject([{ code: 'BAD_TRIGGER', line: 4, col: 5 }]);
    expect(diag('  - webhook: { path: gh, signature: github, secret_env: S }\n    overlap: skip\n    catchup: all\n').map((d) => [d.code, d.line])).toEqual([
      ['BAD_TRIGGER', 5],
      ['BAD_TRIGGER', 4],
    ]);
  });

  it("reports an input_map that reads anything but the event, or a member an event does not have, with a did-you-mean", () => {
    const inputs = 'inputs:\n  order: { type: object, default: {} }\n';
    expect(diag('  - event: a\n    input_map: { order: $.tick.at }\n', inputs)).toMatchObject([{ code: 'TRIGGER_INPUT', line: 6, message: expect.stringContaining('reads only the event') }]);
    expect(diag('  - event: a\n    input_map: { order: $.event.paylod }\n', inputs)).toMatchObject([{ code: 'TRIGGER_INPUT', line: 6, suggestion: '$.event.payload' }]);
    expect(diag('  - event: a\n    input_map: { order: $.event.headers }\n', inputs)).toMatchObject([{ code: 'TRIGGER_INPUT' }]);
    expect(diag('  - webhook: { path: gh, signature: github, secret_env: S }\n    input_map: { order: $.event.headers }\n', inputs)).toEqual([]);
    expect(diag('  - every: 1h\n    input_map: { order: $.event.payload }\n', inputs)).toMatchObject([{ code: 'TRIGGER_INPUT', message: expect.stringContaining('reads only the tick') }]);
  });

  it('checks a webhook: its header goes with hmac-sha256, its secret is not a toolchain variable, its path is one trigger', () => {
    expect(diag('  - webhook: { path: x, signature: hmac-sha256, secret_env: S }\n')).toMatchObject([{ code: 'BAD_TRIGGER', message: expect.stringContaining("needs 'header'") }]);
    expect(diag('  - webhook: { path: x, signature: github, secret_env: S, header: X-Sig }\n')).toMatchObject([{ code: 'BAD_TRIGGER', message: expect.stringContaining("'header' applies to signature hmac-sha256 only") }]);
    expect(diag('  - webhook: { path: x, signature: github, secret_env: S, tolerance: 1m }\n')).toMatchObject([{ code: 'BAD_TRIGGER' }]);
    expect(diag('  - webhook: { path: x, signature: github, secret_env: TOOLCHAIN_TOKEN }\n')).toMatchObject([{ code: 'BAD_TRIGGER', message: expect.stringContaining("toolchain's own variables") }]);
    expect(diag('  - webhook: { path: x, signature: github, secret_env: A }\n  - webhook: { path: x, signature: github, secret_env: B }\n')).toMatchObject([{ code: 'BAD_TRIGGER', line: 4, message: expect.stringContaining("webhook path 'x' is declared by trigger 1 too") }]);
    expect(diag('  - webhook: { path: "../x", signature: github, secret_env: A }\n')[0]!.code).not.toBe('BAD_TRIGGER');
    expect(diag('  - webhook: { path: x, signature: gitlab, secret_env: A }\n')).toHaveLength(1);
  });
});
