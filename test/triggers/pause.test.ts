import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type TriggerEvent } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import type { Clock, TimerHandle } from '../../src/common/clock.js';

// Pausing and resuming triggers through real engines on one SQLite store file, each engine with
// a connection of its own, on a clock the test moves by hand (each look asked for with
// engine.triggers.fireDue). A pause made through one engine stops the ticks of both; the ticks
// while paused are neither fired, skipped nor counted; a resume starts from then, with no burst
// of the ticks it had; and a process that starts after the pause is over catches up only the
// ticks after the resume.

function handClock(start: number): Clock & { add(ms: number): void } {
  let now = start;
  return { now: () => now, setTimeout: (): TimerHandle => 0, clearTimeout: (): void => undefined, add: (ms) => void (now += ms) };
}

const T0 = Date.parse('2026-12-01T05:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'toolchain-triggers-pause-'));
let files = 0;
const engines: Engine[] = [];
const stores: RunStore[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const s of stores.splice(0)) await s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHAIN = (extra = '') => `name: nightly\ntriggers:\n  - every: 1s\n    id: sec\n${extra}  - every: 1h\nsteps:\n  - name: s\n    tool: noop\n`;

async function engineOn(url: string, clock: Clock, chain: string, events: TriggerEvent[] = []): Promise<Engine> {
  const engine = await createEngine({ store: url, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off', observe: true, onTrigger: (e) => events.push(e) });
  engines.push(engine);
  engine.registerTool({ name: 'noop', parameters: { type: 'object' }, handler: () => ({ ok: true }) });
  engine.addChain(chain, 'nightly.yaml');
  return engine;
}

async function sqlite(): Promise<{ url: string; store: RunStore }> {
  const url = `sqlite:${join(dir, `runs-${++files}.db`)}`;
  const store = await openStore(url);
  stores.push(store);
  return { url, store };
}

async function settle(store: RunStore): Promise<void> {
  while ((await store.listRuns({ status: 'running' })).length > 0) await new Promise((r) => setTimeout(r, 2));
}

async function seconds(n: number, clock: { add(ms: number): void }, store: RunStore, ...engines: Engine[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    clock.add(1000);
    await Promise.all(engines.map((e) => e.triggers.fireDue()));
    await settle(store);
  }
}

/** The seconds (of 05:00) of the ticks the store has runs of, for the `sec` trigger. */
async function ticks(store: RunStore): Promise<string[]> {
  return (await store.listRuns({ chain: 'nightly', limit: 1000 }))
    .map((r) => r.id)
    .filter((id) => id.startsWith('nightly#sec@'))
    .sort()
    .map((id) => id.slice(-3, -1));
}

function metric(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('pausing a trigger in the store', () => {
  it('through one engine stops both; the ticks meanwhile are not reported or counted; resumed through the other, it starts from then', async () => {
    const { url, store } = await sqlite();
    const clock = handClock(T0 + 500);
    const seenA: TriggerEvent[] = [];
    const seenB: TriggerEvent[] = [];
    const a = await engineOn(url, clock, CHAIN(), seenA);
    const b = await engineOn(url, clock, CHAIN(), seenB);
    await Promise.all([a.triggers.fireDue(), b.triggers.fireDue()]);
    await seconds(3, clock, store, a, b);
    expect(await ticks(store)).toEqual(['01', '02', '03']);

    clock.add(200);
    const paused = await a.triggers.pause('nightly#sec', { by: 'ada', reason: 'database migration' });
    expect(paused).toEqual([expect.objectContaining({ chain: 'nightly', id: 'sec', changed: true, next: [], paused: { by: 'ada', at: '2026-12-01T05:00:03.700Z', reason: 'database migration' } })]);
    // The engine that paused it says so before it answers; the other when it next looks.
    expect(seenA.at(-1)).toEqual({ type: 'trigger:paused', chain: 'nightly', trigger: 'sec', by: 'ada', at: T0 + 3700, reason: 'database migration', timestamp: T0 + 3700 });
    expect(seenB.filter((e) => e.type === 'trigger:paused')).toEqual([]);
    clock.add(100);
    await b.triggers.fireDue();
    expect(seenB.at(-1)).toEqual({ type: 'trigger:paused', chain: 'nightly', trigger: 'sec', by: 'ada', at: T0 + 3700, reason: 'database migration', timestamp: T0 + 3800 });
    // Pausing it again keeps the first pause.
    expect((await b.triggers.pause('nightly#sec', { by: 'grace' }))[0]).toMatchObject({ changed: false, paused: { by: 'ada' } });

    const before = [seenA.length, seenB.length];
    await seconds(6, clock, store, a, b);
    expect(await ticks(store)).toEqual(['01', '02', '03']);
    // Neither fired nor skipped, nor said paused again.
    expect(seenA.slice(before[0])).toEqual([]);
    expect(seenB.slice(before[1])).toEqual([]);
    expect((await b.triggers.list()).map((v) => [v.id, v.paused?.by ?? null, v.next.length])).toEqual([
      ['sec', 'ada', 0],
      ['2', null, 3],
    ]);
    expect(metric(await a.metrics(), 'toolchain_triggers_paused')).toBe(1);
    expect(metric(await a.metrics(), 'toolchain_trigger_fires_total{')).toBeLessThanOrEqual(3);

    // Resumed at 05:00:09.950 through B: the first tick is 05:00:10, none of the six it had while paused.
    clock.add(150);
    expect((await b.triggers.resume('nightly'))).toEqual([expect.objectContaining({ id: 'sec', changed: true, next: expect.arrayContaining(['2026-12-01T05:00:10.000Z']) }), expect.objectContaining({ id: '2', changed: false })]);
    expect((await b.triggers.list())[0]!.paused).toBeUndefined();
    await seconds(3, clock, store, a, b);
    expect(await ticks(store)).toEqual(['01', '02', '03', '10', '11', '12']);
    expect(seenA.filter((e) => e.type === 'trigger:resumed')).toEqual([{ type: 'trigger:resumed', chain: 'nightly', trigger: 'sec', at: T0 + 9950, timestamp: T0 + 10950 }]);
    expect(seenB.filter((e) => e.type === 'trigger:resumed')).toEqual([{ type: 'trigger:resumed', chain: 'nightly', trigger: 'sec', at: T0 + 9950, timestamp: T0 + 9950 }]);

    // Each fired tick was counted once, in the engine that made its run; none as skipped.
    const [ma, mb] = [await a.metrics(), await b.metrics()];
    expect(metric(ma, 'toolchain_trigger_fires_total{') + metric(mb, 'toolchain_trigger_fires_total{')).toBe(6);
    expect(ma + mb).not.toContain('outcome="skipped"');
    expect(metric(ma, 'toolchain_triggers_paused')).toBe(0);
  });

  it('a process started after a pause ended catches up only the ticks after the resume', async () => {
    const { url, store } = await sqlite();
    const clock = handClock(T0 + 500);
    const every10 = 'name: nightly\ntriggers:\n  - every: 10s\n    id: sec\n    catchup: all\nsteps:\n  - name: s\n    tool: noop\n';
    const first = await engineOn(url, clock, every10);
    await first.triggers.fireDue();
    await seconds(21, clock, store, first); // 05:00:10 and 05:00:20 fire
    clock.add(3000);
    await first.triggers.pause('nightly#sec', { by: 'ada' }); // at 05:00:24.5
    clock.add(30_000);
    await first.triggers.resume('nightly#sec'); // at 05:00:54.5
    await first.close();
    // No process ran from 05:00:54.5 to 05:01:17.5: 05:01:00 and 05:01:10 were missed; 05:00:30 to 05:00:50 were paused.
    clock.add(23_000);
    const second = await engineOn(url, clock, every10);
    for (let i = 0; i < 5; i++) {
      await second.triggers.fireDue();
      await settle(store);
    }
    expect((await store.listRuns({ limit: 100 })).map((r) => r.id).sort()).toEqual(['nightly#sec@20261201T050010Z', 'nightly#sec@20261201T050020Z', 'nightly#sec@20261201T050100Z', 'nightly#sec@20261201T050110Z']);
  });

  it('a process started while a trigger is paused fires nothing of it, and fires again once it is resumed', async () => {
    const { url, store } = await sqlite();
    const clock = handClock(T0 + 500);
    const first = await engineOn(url, clock, CHAIN());
    await first.triggers.fireDue();
    await seconds(1, clock, store, first);
    await first.triggers.pause('nightly', { by: 'ada' });
    await first.close();
    clock.add(5000);
    const events: TriggerEvent[] = [];
    const second = await engineOn(url, clock, CHAIN(), events);
    await seconds(3, clock, store, second);
    expect(await ticks(store)).toEqual(['01']);
    // It met it paused: no change to report.
    expect(events).toEqual([]);
    const other = await engineOn(url, clock, CHAIN());
    await other.triggers.resume('nightly#sec');
    await seconds(2, clock, store, second);
    expect(await ticks(store)).toEqual(['01', '10', '11']);
  });

  it('drops the ticks an overlap: queue trigger kept when it is paused', async () => {
    const { url, store } = await sqlite();
    const clock = handClock(T0 + 500);
    const gates: (() => void)[] = [];
    const engine = await createEngine({ store: url, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off' });
    engines.push(engine);
    engine.registerTool({ name: 'hold', parameters: { type: 'object' }, handler: () => new Promise((resolve) => gates.push(() => resolve({ ok: true }))) });
    engine.addChain('name: nightly\ntriggers:\n  - every: 1s\n    id: sec\n    overlap: queue\nsteps:\n  - name: s\n    tool: hold\n');
    await engine.triggers.fireDue();
    for (let i = 0; i < 3; i++) {
      clock.add(1000);
      await engine.triggers.fireDue(); // 01 fires and holds; 02 and 03 are kept
    }
    await engine.triggers.pause('nightly#sec', { by: 'ada' });
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 2));
    gates.shift()!();
    await settle(store);
    clock.add(1000);
    await engine.triggers.fireDue();
    await engine.triggers.resume('nightly#sec');
    clock.add(1000);
    await engine.triggers.fireDue();
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 2));
    gates.shift()!();
    await settle(store);
    expect(await ticks(store)).toEqual(['01', '05']);
  });
});

describe('naming what to pause', () => {
  it('refuses an unknown chain or trigger with its code and a did-you-mean, and records nothing', async () => {
    const { url, store } = await sqlite();
    const engine = await engineOn(url, handClock(T0), CHAIN());
    await expect(engine.triggers.pause('nightley#sec', { by: 'ada' })).rejects.toMatchObject({ code: 'CHAIN_NOT_FOUND', message: "no chain named 'nightley' (did you mean 'nightly'?)" });
    await expect(engine.triggers.pause('nightly#secc', { by: 'ada' })).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND', message: "chain 'nightly' has no trigger 'secc' (its triggers: nightly#sec, nightly#2) (did you mean 'sec'?)" });
    await expect(engine.triggers.resume('nightly#3')).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
    engine.addChain('name: plain\nsteps:\n  - name: s\n    tool: noop\n');
    await expect(engine.triggers.pause('plain', { by: 'ada' })).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND', message: "chain 'plain' declares no triggers" });
    await expect(engine.triggers.pause('nightly', { by: ' ' })).rejects.toMatchObject({ code: 'USAGE' });
    expect(await store.triggers.list()).toEqual([]);
  });
});
