import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compileChain, createEngine, type Engine, type TriggerEvent } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import type { Clock, TimerHandle } from '../../src/common/clock.js';

// Triggers on a test clock: what `triggers:` compiles to and what validate says of a bad one,
// the fire times of cron (across daylight-saving changes) and intervals, the content hash that
// leaves triggers out, and firing — once per tick, catch-up and overlap — through a real engine
// and a real store, with the clock moved by hand and each look asked for (engine.triggers.fireDue).

/** Time moves when the test says; timers are never due (the engine's loop is not used). */
function handClock(start: number): Clock & { set(ms: number): void; add(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    setTimeout: (): TimerHandle => 0,
    clearTimeout: (): void => undefined,
    set: (ms) => void (now = ms),
    add: (ms) => void (now += ms),
  };
}

const T0 = Date.parse('2026-12-01T05:00:00.000Z');
const engines: Engine[] = [];
const stores: RunStore[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const s of stores.splice(0)) await s.close();
});

async function engineOn(store: RunStore, clock: Clock, chain: string, events: TriggerEvent[] = []): Promise<Engine> {
  const engine = await createEngine({ store, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off', onTrigger: (e) => events.push(e) });
  engines.push(engine);
  engine.registerTool({ name: 'noop', parameters: { type: 'object' }, handler: () => ({ ok: true }) });
  engine.addChain(chain, 'c.yaml');
  return engine;
}

async function memoryStore(): Promise<RunStore> {
  const store = await openStore('memory:');
  stores.push(store);
  return store;
}

/** Until no run of the store is running (the runs a look started have ended). */
async function settle(store: RunStore): Promise<void> {
  while ((await store.listRuns({ status: 'running' })).length > 0) await new Promise((r) => setImmediate(r));
}

/** Moves the clock a second at a time, each second one look, each look's runs ended before the next. */
async function seconds(n: number, clock: { add(ms: number): void }, store: RunStore, ...engines: Engine[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    clock.add(1000);
    await Promise.all(engines.map((e) => e.triggers.fireDue()));
    await settle(store);
  }
}

async function ids(store: RunStore): Promise<string[]> {
  return (await store.listRuns({ limit: 1000 })).map((r) => r.id).sort();
}

const diag = (text: string) => compileChain(text, { file: 'c.yaml' }).diagnostics.map((d) => ({ code: d.code, line: d.line, col: d.col, message: d.message, suggestion: d.suggestion }));

describe('triggers in a chain file', () => {
  it('compile into the plan with their defaults: id by position, catchup latest, overlap skip, UTC', () => {
    const { plan, diagnostics } = compileChain('name: n\ntriggers:\n  - every: 15m\n  - schedule: "0 6 * * 1-5"\n    timezone: Europe/Paris\n    id: morning\n    catchup: all\n    overlap: queue\n    enabled: false\nsteps:\n  - name: s\n    sleep: 1ms\n', { file: 'c.yaml' });
    expect(diagnostics).toEqual([]);
    expect(plan!.triggers).toMatchObject([
      { id: '1', kind: 'every', everyMs: 900_000, timezone: 'UTC', catchup: 'latest', overlap: 'skip', enabled: true, line: 3 },
      { id: 'morning', kind: 'schedule', cron: '0 6 * * 1-5', timezone: 'Europe/Paris', catchup: 'all', overlap: 'queue', enabled: false, line: 4 },
    ]);
  });

  it('a bad cron names its field and what it allows, at the schedule', () => {
    expect(diag('name: n\ntriggers:\n  - schedule: "0 25 * * *"\nsteps:\n  - name: s\n    sleep: 1ms\n')).toEqual([
      { code: 'BAD_CRON', line: 3, col: 15, message: "cron field 2 (hour) '25' is not valid: it allows 0-23 and * , - /", suggestion: undefined },
    ]);
    expect(diag('name: n\ntriggers:\n  - schedule: "* * * *"\nsteps:\n  - name: s\n    sleep: 1ms\n')[0]).toMatchObject({ code: 'BAD_CRON', message: expect.stringContaining('has 4 field(s)') });
    expect(diag('name: n\ntriggers:\n  - schedule: "61 * * * * *"\nsteps:\n  - name: s\n    sleep: 1ms\n')[0]).toMatchObject({ code: 'BAD_CRON', message: expect.stringContaining('field 1 (second)') });
  });

  it('an unknown time zone is reported at its value with a did-you-mean', () => {
    expect(diag('name: n\ntriggers:\n  - schedule: "0 6 * * *"\n    timezone: Europe/Pari\nsteps:\n  - name: s\n    sleep: 1ms\n')).toEqual([
      { code: 'UNKNOWN_TIMEZONE', line: 4, col: 15, message: "'Europe/Pari' is not a time zone (IANA names such as Europe/Paris; default UTC) (did you mean 'Europe/Paris'?)", suggestion: 'Europe/Paris' },
    ]);
  });

  it("an input that does not fit the chain's inputs is reported at the key", () => {
    const head = 'name: n\ninputs:\n  days: integer\n  tag: { type: string, default: x }\ntriggers:\n';
    const tail = 'steps:\n  - name: s\n    sleep: 1ms\n';
    expect(diag(`${head}  - every: 1h\n    input: { dayz: 1 }\n${tail}`).map((d) => [d.code, d.line, d.suggestion])).toEqual([
      ['TRIGGER_INPUT', 7, 'days'],
      ['TRIGGER_INPUT', 7, undefined],
    ]);
    expect(diag(`${head}  - every: 1h\n    input: { days: "one" }\n${tail}`)[0]).toMatchObject({ code: 'TRIGGER_INPUT', message: 'input \'days\' is declared integer, and the trigger gives string "one"' });
    expect(diag(`${head}  - every: 1h\n    input_map: { days: 1, tag: $.other.x }\n${tail}`)[0]).toMatchObject({ code: 'TRIGGER_INPUT', message: expect.stringContaining('reads only the tick') });
    expect(diag(`${head}  - every: 1h\n    input_map: { days: 1, tag: $.tick.at }\n${tail}`)).toEqual([]);
  });

  it('refuses both kinds in one trigger, sub-second intervals and an id used twice', () => {
    const tail = 'steps:\n  - name: s\n    sleep: 1ms\n';
    expect(diag(`name: n\ntriggers:\n  - every: 1h\n    schedule: "* * * * *"\n${tail}`)[0]).toMatchObject({ code: 'BAD_TRIGGER', line: 3 });
    expect(diag(`name: n\ntriggers:\n  - every: 1500ms\n${tail}`)[0]).toMatchObject({ code: 'BAD_TRIGGER', line: 3, col: 12 });
    expect(diag(`name: n\ntriggers:\n  - every: 1h\n  - every: 2h\n    id: "1"\n${tail}`)[0]).toMatchObject({ code: 'BAD_TRIGGER', line: 5, message: expect.stringContaining("trigger id '1' is used by trigger 1 too") });
  });
});

describe('the content hash leaves the triggers out', () => {
  const chain = (triggers: string, step = 'sleep: 1ms') => `name: n\n${triggers}steps:\n  - name: s\n    ${step}\n`;
  const hash = (text: string) => compileChain(text, { file: 'c.yaml' }).plan!.hash;

  it('adding, editing or removing a trigger keeps it; editing a step changes it', () => {
    const none = hash(chain(''));
    expect(hash(chain('triggers:\n  - every: 1h\n'))).toBe(none);
    expect(hash(chain('triggers:\n  - schedule: "0 6 * * *"\n    timezone: Europe/Paris\n'))).toBe(none);
    expect(hash(chain('triggers:\n  - every: 1h\n', 'sleep: 2ms'))).not.toBe(none);
  });

  it('resuming a run after its trigger was edited is not CHAIN_CHANGED; after a step was edited it is', async () => {
    const store = await memoryStore();
    const engine = await createEngine({ store, cache: 'off' });
    engines.push(engine);
    let failNext = true;
    engine.registerTool({ name: 'flaky', parameters: { type: 'object' }, handler: () => { if (failNext) throw new Error('first time'); return { ok: true }; } });
    const text = (every: string, extra = '') => `name: n\ntriggers:\n  - every: ${every}\nsteps:\n  - name: s\n    tool: flaky\n${extra}`;
    engine.addChain(text('1h'));
    expect((await engine.run('n', {}, { runId: 'r1' })).status).toBe('failed');
    engine.addChain(text('2h'));
    failNext = false;
    expect(await engine.resume('r1')).toMatchObject({ status: 'succeeded' });

    failNext = true;
    expect((await engine.run('n', {}, { runId: 'r2' })).status).toBe('failed');
    engine.addChain(text('2h', '  - name: t\n    sleep: 1ms\n'));
    expect((await engine.resume('r2')).error?.code).toBe('CHAIN_CHANGED');
  });
});

describe('fire times', () => {
  async function next(chain: string, at: number): Promise<readonly string[]> {
    const engine = await engineOn(await memoryStore(), handClock(at), chain);
    return (await engine.triggers.list())[0]!.next;
  }
  const cron = (expr: string, tz: string) => `name: n\ntriggers:\n  - schedule: "${expr}"\n    timezone: ${tz}\nsteps:\n  - name: s\n    sleep: 1ms\n`;

  it('every: the multiples of the interval since the Unix epoch', async () => {
    expect(await next('name: n\ntriggers:\n  - every: 7m\nsteps:\n  - name: s\n    sleep: 1ms\n', T0)).toEqual(['2026-12-01T05:04:00.000Z', '2026-12-01T05:11:00.000Z', '2026-12-01T05:18:00.000Z']);
  });

  it('cron in a zone: 06:00 Paris on weekdays is 05:00 UTC in winter', async () => {
    expect(await next(cron('0 6 * * 1-5', 'Europe/Paris'), T0)).toEqual(['2026-12-02T05:00:00.000Z', '2026-12-03T05:00:00.000Z', '2026-12-04T05:00:00.000Z']);
  });

  it('a fixed time in the hour skipped in spring fires once, at the first time after the jump', async () => {
    // Paris goes from 02:00 to 03:00 on 2026-03-29: 02:30 does not exist that day.
    expect(await next(cron('30 2 * * *', 'Europe/Paris'), Date.parse('2026-03-28T12:00:00Z'))).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
  });

  it('a fixed time in the hour repeated in autumn fires once, at its first occurrence', async () => {
    // Paris goes from 03:00 back to 02:00 on 2026-10-25: 02:30 happens at 00:30Z and at 01:30Z.
    expect(await next(cron('30 2 * * *', 'Europe/Paris'), Date.parse('2026-10-24T12:00:00Z'))).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
  });

  it('an hourly job keeps its real hours through the repeated hour (each instant once)', async () => {
    expect(await next(cron('0 * * * *', 'Europe/Paris'), Date.parse('2026-10-24T23:30:00Z'))).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z']);
  });
});

const EVERY_SECOND = (extra = '') => `name: n\ninputs:\n  at: { type: string, default: "" }\ntriggers:\n  - every: 1s\n    input_map: { at: $.tick.at }\n${extra}steps:\n  - name: s\n    tool: noop\n`;

describe('firing', () => {
  it('a new trigger starts from now; each tick is one run named by its tick, with the tick as input', async () => {
    const store = await memoryStore();
    const clock = handClock(T0 + 500);
    const engine = await engineOn(store, clock, EVERY_SECOND());
    await engine.triggers.fireDue();
    expect(await ids(store)).toEqual([]);
    await seconds(3, clock, store, engine);
    await engine.triggers.fireDue();
    expect(await ids(store)).toEqual(['n#1@20261201T050001Z', 'n#1@20261201T050002Z', 'n#1@20261201T050003Z']);
    expect((await store.getRun('n#1@20261201T050002Z'))!.input).toEqual({ at: '2026-12-01T05:00:02.000Z' });
  });

  it('two engines on one store make one run per tick', async () => {
    const store = await memoryStore();
    const clock = handClock(T0);
    const [a, b] = [await engineOn(store, clock, EVERY_SECOND()), await engineOn(store, clock, EVERY_SECOND())];
    await Promise.all([a.triggers.fireDue(), b.triggers.fireDue()]);
    await seconds(4, clock, store, a, b);
    expect(await ids(store)).toEqual([1, 2, 3, 4].map((s) => `n#1@20261201T05000${s}Z`));
  });

  it('a disabled trigger fires nothing; enabled again, it starts from then', async () => {
    const store = await memoryStore();
    const clock = handClock(T0);
    const engine = await engineOn(store, clock, EVERY_SECOND('    enabled: false\n'));
    await engine.triggers.fireDue();
    clock.add(2000);
    await engine.triggers.fireDue();
    expect(await ids(store)).toEqual([]);
    engine.addChain(EVERY_SECOND());
    await engine.triggers.fireDue();
    await seconds(1, clock, store, engine);
    expect(await ids(store)).toEqual(['n#1@20261201T050003Z']);
    // Disabled for 3 s and enabled again: from then on, the ticks meanwhile not caught up.
    engine.addChain(EVERY_SECOND('    enabled: false\n'));
    await engine.triggers.fireDue();
    await seconds(3, clock, store, engine);
    engine.addChain(EVERY_SECOND());
    await engine.triggers.fireDue();
    await seconds(1, clock, store, engine);
    expect(await ids(store)).toEqual(['n#1@20261201T050003Z', 'n#1@20261201T050007Z']);
  });
});

describe('catchup: ticks missed while no process ran', () => {
  /** A process fired ticks 1 and 2, then none ran for 5 more seconds; one starts at T0+7.5 s. */
  async function restart(catchup: string): Promise<string[]> {
    const store = await memoryStore();
    const clock = handClock(T0 + 500);
    const extra = `    catchup: ${catchup}\n`;
    const first = await engineOn(store, clock, EVERY_SECOND(extra));
    await first.triggers.fireDue();
    await seconds(2, clock, store, first);
    await first.close();
    clock.add(5000);
    const second = await engineOn(store, clock, EVERY_SECOND(extra));
    await second.triggers.fireDue();
    for (let i = 0; i < 10; i++) {
      await settle(store);
      await second.triggers.fireDue(); // catch-up ticks wait for the run before them
    }
    return (await ids(store)).map((id) => id.slice(-3, -1));
  }

  it('latest fires the newest missed tick only (not every one, not none)', async () => {
    expect(await restart('latest')).toEqual(['01', '02', '07']);
  });

  it('all fires every missed tick, oldest first, each after the one before (not skipped for overlap)', async () => {
    expect(await restart('all')).toEqual(['01', '02', '03', '04', '05', '06', '07']);
  });

  it('none fires none of them', async () => {
    expect(await restart('none')).toEqual(['01', '02']);
  });
});

describe('overlap: a tick while the previous run is going', () => {
  /** A chain whose runs each wait until the test lets them go. */
  async function gated(overlap: string, events: TriggerEvent[]) {
    const store = await memoryStore();
    const clock = handClock(T0 + 500);
    const gates: (() => void)[] = [];
    const engine = await createEngine({ store, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off', onTrigger: (e) => events.push(e) });
    engines.push(engine);
    engine.registerTool({ name: 'hold', parameters: { type: 'object' }, handler: () => new Promise((resolve) => gates.push(() => resolve({ ok: true }))) });
    engine.addChain(`name: n\ntriggers:\n  - every: 1s\n    overlap: ${overlap}\nsteps:\n  - name: s\n    tool: hold\n`);
    await engine.triggers.fireDue();
    const tick = async (): Promise<void> => {
      clock.add(1000);
      await engine.triggers.fireDue();
    };
    const release = async (): Promise<void> => {
      gates.shift()!();
      while ((await store.listRuns({ status: 'running' })).length > gates.length) await new Promise((r) => setImmediate(r));
    };
    return { store, tick, release, gates };
  }

  it('skip drops every tick while the run goes, even when the tick before had no run of its own', async () => {
    const events: TriggerEvent[] = [];
    const { store, tick, release } = await gated('skip', events);
    await tick(); // 1 fires and holds
    await tick(); // 2 skipped
    await tick(); // 3 skipped: the run of tick 1 is still going (tick 2 made none)
    await release();
    await tick(); // 4 fires
    expect(await ids(store)).toEqual(['n#1@20261201T050001Z', 'n#1@20261201T050004Z']);
    expect(events.map((e) => `${e.type} ${'tick' in e ? e.tick!.slice(-3, -1) : ''}`)).toEqual(['trigger:fired 01', 'trigger:skipped 02', 'trigger:skipped 03', 'trigger:fired 04']);
  });

  it('queue runs the ticks that came meanwhile, one after the other, none at once', async () => {
    const events: TriggerEvent[] = [];
    const { store, tick, release, gates } = await gated('queue', events);
    await tick(); // 1 fires and holds
    await tick(); // 2 queued
    await tick(); // 3 queued
    expect(await ids(store)).toEqual(['n#1@20261201T050001Z']);
    await release();
    await tick(); // 4 comes: 2 fires (3 and 4 wait for it)
    expect(await ids(store)).toEqual(['n#1@20261201T050001Z', 'n#1@20261201T050002Z']);
    expect(gates.length).toBe(1);
    await release();
    await tick(); // 3 fires
    await release();
    await tick(); // 4 fires
    expect((await ids(store)).map((id) => id.slice(-3, -1))).toEqual(['01', '02', '03', '04']);
    expect(events.every((e) => e.type === 'trigger:fired')).toBe(true);
  });

  it('allow fires every tick while runs go', async () => {
    const { store, tick } = await gated('allow', []);
    await tick();
    await tick();
    await tick();
    expect((await store.listRuns({ status: 'running' })).length).toBe(3);
  });
});

describe('reloading the chains folder', () => {
  it('an edited schedule starts from the reload; a removed chain fires no more', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-triggers-'));
    try {
      const file = join(dir, 'n.yaml');
      writeFileSync(file, EVERY_SECOND());
      const store = await memoryStore();
      const clock = handClock(T0 + 500);
      const engine = await createEngine({ chainsDir: dir, store, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off' });
      engines.push(engine);
      engine.registerTool({ name: 'noop', parameters: { type: 'object' }, handler: () => ({ ok: true }) });
      await engine.triggers.fireDue();
      await seconds(2, clock, store, engine); // ticks 1 and 2
      writeFileSync(file, EVERY_SECOND().replace('every: 1s', 'every: 3s'));
      await engine.reloadChains();
      await engine.triggers.fireDue(); // the look that meets the edit, at 2.5 s
      await seconds(4, clock, store, engine); // now 6.5 s: the 3 s ticks after the reload at 2.5 s: 3 and 6
      expect((await ids(store)).map((id) => id.slice(-3, -1))).toEqual(['01', '02', '03', '06']);
      unlinkSync(file);
      await engine.reloadChains();
      await seconds(6, clock, store, engine);
      expect(await ids(store)).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what a process says of its ticks', () => {
  it('a tick whose input the chain refuses starts no run and is reported; the metric counts each outcome', async () => {
    const store = await memoryStore();
    const clock = handClock(T0 + 500);
    const events: TriggerEvent[] = [];
    const engine = await createEngine({ store, clock, triggers: true, triggerIntervalMs: 2 ** 30, cache: 'off', observe: true, onTrigger: (e) => events.push(e) });
    engines.push(engine);
    engine.registerTool({ name: 'noop', parameters: { type: 'object' }, handler: () => ({ ok: true }) });
    // `$.tick.at` is a string: an input declared integer refuses it when the run starts.
    engine.addChain('name: n\ninputs:\n  days: integer\ntriggers:\n  - every: 1s\n    input_map: { days: $.tick.at }\n  - every: 1s\n    id: ok\n    input: { days: 1 }\nsteps:\n  - name: s\n    tool: noop\n');
    await engine.triggers.fireDue();
    await seconds(1, clock, store, engine);
    expect(await ids(store)).toEqual(['n#ok@20261201T050001Z']);
    expect(events.map((e) => `${e.type} ${e.trigger}${'reason' in e ? ` ${e.reason}` : ''}`)).toEqual(['trigger:skipped 1 refused', 'trigger:fired ok']);
    expect(events[0]).toMatchObject({ message: expect.stringContaining('INPUT_INVALID') });
    const metrics = await engine.metrics();
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="n",trigger="1",outcome="refused"} 1');
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="n",trigger="ok",outcome="fired"} 1');
  });
});

describe('firing across daylight-saving changes', () => {
  /** Looks once an hour from `from` to `to`; the run ids' ticks. */
  async function hourly(expr: string, from: string, to: string): Promise<string[]> {
    const store = await memoryStore();
    const clock = handClock(Date.parse(from));
    const engine = await engineOn(store, clock, `name: n\ntriggers:\n  - schedule: "${expr}"\n    timezone: Europe/Paris\nsteps:\n  - name: s\n    tool: noop\n`);
    await engine.triggers.fireDue();
    while (clock.now() < Date.parse(to)) {
      clock.add(3_600_000);
      await engine.triggers.fireDue();
      await settle(store);
    }
    return (await ids(store)).map((id) => id.slice(id.indexOf('@') + 1));
  }

  it('spring: 02:30 does not exist on 29 March; it fires once, at 03:00 local, and the next day as ever', async () => {
    expect(await hourly('30 2 * * *', '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z')).toEqual(['20260329T010000Z', '20260330T003000Z']);
  });

  it('autumn: 02:30 happens twice on 25 October; it fires once, at the first', async () => {
    expect(await hourly('30 2 * * *', '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z')).toEqual(['20261025T003000Z', '20261026T013000Z']);
  });
});
