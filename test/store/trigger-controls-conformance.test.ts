import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/store/index.js';
import { DRIVERS, type Namespace } from '../fixtures/store/drivers.js';

// The paused-triggers part of the store contract, against every driver: a pause is recorded once
// (first writer wins, also when two race), a resume ends it and keeps its time, the list has
// every record by key, and a second connection to the same store sees what the first wrote.

const T0 = 1_700_000_000_000;

describe.each(DRIVERS)('run store paused triggers: $name', (driver) => {
  let ns: Namespace;
  let store: RunStore;

  beforeEach(async () => {
    ns = driver.namespace();
    store = await ns.open();
  });
  afterEach(async () => {
    await ns.drop();
  });

  it('a new store has no record; resuming a trigger never paused changes nothing and records nothing', async () => {
    expect(await store.triggers.list()).toEqual([]);
    expect(await store.triggers.resume('nightly#1', T0)).toEqual({ control: { key: 'nightly#1', paused: null, resumed_at: null }, changed: false });
    expect(await store.triggers.list()).toEqual([]);
  });

  it('pauses once: a second pause keeps the first one’s name, time and reason', async () => {
    const first = await store.triggers.pause('nightly#1', { by: 'ada', at: T0, reason: 'database migration — until 14:00' });
    expect(first).toEqual({ control: { key: 'nightly#1', paused: { by: 'ada', at: T0, reason: 'database migration — until 14:00' }, resumed_at: null }, changed: true });
    const again = await store.triggers.pause('nightly#1', { by: 'grace', at: T0 + 5 });
    expect(again).toEqual({ control: first.control, changed: false });
    // Without a reason, none is kept (not an empty one).
    expect((await store.triggers.pause('nightly#quarter', { by: 'grace', at: T0 + 6 })).control).toEqual({ key: 'nightly#quarter', paused: { by: 'grace', at: T0 + 6 }, resumed_at: null });
    expect(await store.triggers.list()).toEqual([first.control, { key: 'nightly#quarter', paused: { by: 'grace', at: T0 + 6 }, resumed_at: null }]);
  });

  it('resumes: the pause is gone, the resume time kept; pausing again keeps that time until the next resume', async () => {
    await store.triggers.pause('report#2', { by: 'ada', at: T0, reason: 'noisy' });
    expect(await store.triggers.resume('report#2', T0 + 100)).toEqual({ control: { key: 'report#2', paused: null, resumed_at: T0 + 100 }, changed: true });
    expect(await store.triggers.resume('report#2', T0 + 200)).toEqual({ control: { key: 'report#2', paused: null, resumed_at: T0 + 100 }, changed: false });
    expect(await store.triggers.list()).toEqual([{ key: 'report#2', paused: null, resumed_at: T0 + 100 }]);
    // The reason of the first pause is not carried into the second.
    expect((await store.triggers.pause('report#2', { by: 'grace', at: T0 + 300 })).control).toEqual({ key: 'report#2', paused: { by: 'grace', at: T0 + 300 }, resumed_at: T0 + 100 });
    expect((await store.triggers.resume('report#2', T0 + 400)).control).toEqual({ key: 'report#2', paused: null, resumed_at: T0 + 400 });
  });

  it('lists every record in key order, names of any characters kept as they are', async () => {
    const keys = ['zeta#1', 'alpha#b-2', 'alpha#a_1', 'Beta#1', 'ōsaka#1'];
    for (const [i, key] of keys.entries()) await store.triggers.pause(key, { by: `person ${i}`, at: T0 + i });
    expect((await store.triggers.list()).map((c) => c.key)).toEqual([...keys].sort());
    expect((await store.triggers.list()).find((c) => c.key === 'ōsaka#1')?.paused).toEqual({ by: 'person 4', at: T0 + 4 });
  });

  it('of two pauses at once one wins, and both answer its record', async () => {
    const [a, b] = await Promise.all([store.triggers.pause('race#1', { by: 'ada', at: T0 }), store.triggers.pause('race#1', { by: 'grace', at: T0 + 1 })]);
    expect([a.changed, b.changed].filter(Boolean)).toHaveLength(1);
    expect(a.control).toEqual(b.control);
    expect(['ada', 'grace']).toContain(a.control.paused?.by);
  });

  it('what one connection writes, another connection to the same store reads', async () => {
    const other = await ns.open();
    await store.triggers.pause('shared#1', { by: 'ada', at: T0 });
    expect(await other.triggers.list()).toEqual([{ key: 'shared#1', paused: { by: 'ada', at: T0 }, resumed_at: null }]);
    expect((await other.triggers.resume('shared#1', T0 + 9)).changed).toBe(true);
    expect(await store.triggers.list()).toEqual([{ key: 'shared#1', paused: null, resumed_at: T0 + 9 }]);
  });

  it('keeps the records through a prune of finished runs', async () => {
    await store.triggers.pause('kept#1', { by: 'ada', at: T0 });
    await store.prune(T0 + 1e12);
    expect(await store.triggers.list()).toEqual([{ key: 'kept#1', paused: { by: 'ada', at: T0 }, resumed_at: null }]);
  });
});
