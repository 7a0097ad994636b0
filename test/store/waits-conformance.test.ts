import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewRun, RunStore, WaitRequest } from '../../src/store/index.js';
import { DRIVERS, type Namespace } from '../fixtures/store/drivers.js';

// The waits half of the store contract, against every driver: opening a wait under the owner's
// epoch, parking a run, resolving a wait once (first writer wins), finding due runs, events kept
// once by id and listed by position, and pruning.

const T0 = 1_700_000_000_000;

function newRun(id: string, over: Partial<NewRun> = {}): NewRun {
  return { id, chain: 'orders', chain_hash: 'h1', input: {}, owner: 'host:1:a', lease_until: T0 + 30_000, now: T0, ...over };
}

function wait(id: string, over: Partial<WaitRequest> = {}): WaitRequest {
  return { id, key: 'pay', kind: 'event', name: 'payment.settled', match: { order: 7 }, until: T0 + 60_000, detail: null, ...over };
}

describe.each(DRIVERS)('run store waits: $name', (driver) => {
  let ns: Namespace;
  let store: RunStore;

  beforeEach(async () => {
    ns = driver.namespace();
    store = await ns.open();
  });
  afterEach(async () => {
    await ns.drop();
  });

  it('opens a wait once under the owner epoch: a second open returns the first, an old epoch is fenced', async () => {
    await store.createRun(newRun('r1'));
    const opened = await store.waits.openWait('r1', 1, wait('w1'), T0 + 1);
    expect(opened).toEqual({ ...wait('w1'), run_id: 'r1', chain: 'orders', created_at: T0 + 1, outcome: null, resolved_at: null });
    expect(await store.waits.openWait('r1', 1, wait('w1', { until: T0 + 99 }), T0 + 2)).toEqual(opened);
    expect(await store.waits.openWait('r1', 2, wait('w2'), T0 + 2)).toBe('fenced');
    expect(await store.waits.openWait('missing', 1, wait('w3'), T0 + 2)).toBe('fenced');
    const detail = { tool: 'files/write_file', args: { path: 'a.txt', text: 'Ōsaka ›' } };
    const approval = await store.waits.openWait('r1', 1, wait('w4', { kind: 'approval', name: null, match: null, until: null, detail }), T0 + 3);
    expect(approval).toMatchObject({ kind: 'approval', name: null, match: null, until: null, detail });
  });

  it('parks a run: waiting, no owner, the epoch kept; due at its wake time; an old epoch is fenced', async () => {
    await store.createRun(newRun('r1'));
    await store.waits.openWait('r1', 1, wait('w1', { kind: 'sleep', name: null, match: null, until: T0 + 5_000 }), T0);
    expect(await store.waits.parkRun('r1', 2, T0 + 5_000, ['w1'], T0 + 10)).toBe('fenced');
    expect(await store.waits.parkRun('r1', 1, T0 + 5_000, ['w1'], T0 + 10)).toBe('ok');
    expect(await store.getRun('r1')).toMatchObject({ status: 'waiting', owner: null, lease_until: null, epoch: 1, updated_at: T0 + 10 });
    expect(await store.waits.dueRuns(T0 + 4_999, 10)).toEqual([]);
    expect((await store.waits.dueRuns(T0 + 5_000, 10)).map((r) => r.id)).toEqual(['r1']);
    expect((await store.listRuns({ status: 'waiting' })).map((r) => r.id)).toEqual(['r1']);
    expect(await store.waits.wakeAt('r1')).toBe(T0 + 5_000);
    // A claim takes it: running again, and no longer due.
    const claim = await store.claimRun('r1', { owner: 'host:2:b', lease_until: T0 + 40_000, now: T0 + 5_001, expected_epoch: 1 });
    expect(claim).toMatchObject({ claimed: true, run: { status: 'running', epoch: 2, owner: 'host:2:b' } });
    expect(await store.waits.dueRuns(T0 + 9_000, 10)).toEqual([]);
    expect(await store.waits.wakeAt('r1')).toBeUndefined();
    expect(await store.waits.wakeAt('missing')).toBeUndefined();
  });

  it('a run parked with no wake time is due only once a wait of it is resolved', async () => {
    await store.createRun(newRun('r1'));
    await store.waits.openWait('r1', 1, wait('w1', { until: null }), T0);
    await store.waits.parkRun('r1', 1, null, ['w1'], T0 + 1);
    expect(await store.waits.dueRuns(T0 + 1e12, 10)).toEqual([]);
    expect(await store.waits.wakeAt('r1')).toBeNull();
    const resolved = await store.waits.resolveWait('w1', { ok: true, value: { order: 7, amount: 12 } }, T0 + 50);
    expect(resolved).toMatchObject({ first: true, wait: { id: 'w1', outcome: { ok: true, value: { order: 7, amount: 12 } }, resolved_at: T0 + 50 } });
    expect((await store.waits.dueRuns(T0 + 50, 10)).map((r) => r.id)).toEqual(['r1']);
  });

  it('resolves a wait once: the first outcome wins, later ones get it back', async () => {
    await store.createRun(newRun('r1'));
    await store.waits.openWait('r1', 1, wait('w1'), T0);
    const outcomes = await Promise.all([
      store.waits.resolveWait('w1', { ok: true, value: 'event' }, T0 + 1),
      store.waits.resolveWait('w1', { ok: false, code: 'WAIT_TIMEOUT', message: 'timed out' }, T0 + 2),
    ]);
    expect(outcomes.filter((o) => o?.first)).toHaveLength(1);
    const winner = outcomes.find((o) => o?.first)!.wait.outcome;
    expect(outcomes.map((o) => o?.wait.outcome)).toEqual([winner, winner]);
    expect(await store.waits.resolveWait('missing', { ok: true, value: 1 }, T0)).toBeUndefined();
  });

  it('a wait resolved while its run still runs makes the run due the moment it parks', async () => {
    await store.createRun(newRun('r1'));
    await store.waits.openWait('r1', 1, wait('w1'), T0);
    await store.waits.resolveWait('w1', { ok: true, value: 1, by: 'ada', comment: 'fine' }, T0 + 3);
    await store.waits.parkRun('r1', 1, T0 + 60_000, ['w1'], T0 + 7);
    expect((await store.waits.dueRuns(T0 + 7, 10)).map((r) => r.id)).toEqual(['r1']);
    expect((await store.waits.listWaits({ run_id: 'r1' }))[0]!.outcome).toEqual({ ok: true, value: 1, by: 'ada', comment: 'fine' });
  });

  it('a wait resolved before the run parked on other waits does not make it due', async () => {
    await store.createRun(newRun('r1'));
    await store.waits.openWait('r1', 1, wait('first', { key: 'a' }), T0);
    await store.waits.resolveWait('first', { ok: true, value: 1 }, T0 + 1);
    await store.waits.openWait('r1', 1, wait('second', { key: 'b' }), T0 + 2);
    await store.waits.parkRun('r1', 1, T0 + 60_000, ['second'], T0 + 3);
    expect(await store.waits.dueRuns(T0 + 59_999, 10)).toEqual([]);
    expect(await store.waits.wakeAt('r1')).toBe(T0 + 60_000);
  });

  it('lists waits by run, kind, event name and openness, oldest first', async () => {
    await store.createRun(newRun('r1'));
    await store.createRun(newRun('r2'));
    await store.waits.openWait('r1', 1, wait('a', { key: 'a' }), T0 + 1);
    await store.waits.openWait('r2', 1, wait('b', { key: 'b', name: 'other' }), T0 + 2);
    await store.waits.openWait('r2', 1, wait('c', { key: 'c', kind: 'approval', name: null, match: null }), T0 + 3);
    await store.waits.resolveWait('a', { ok: true, value: null }, T0 + 4);
    const ids = async (filter: Parameters<RunStore['waits']['listWaits']>[0]): Promise<string[]> => (await store.waits.listWaits(filter)).map((w) => w.id);
    expect(await ids({})).toEqual(['a', 'b', 'c']);
    expect(await ids({ run_id: 'r2' })).toEqual(['b', 'c']);
    expect(await ids({ kind: 'event', open: true })).toEqual(['b']);
    expect(await ids({ kind: 'event', name: 'payment.settled' })).toEqual(['a']);
    expect(await ids({ open: false })).toEqual(['a']);
    expect(await ids({ kind: 'approval', open: true })).toEqual(['c']);
    expect(await ids({ limit: 2 })).toEqual(['a', 'b']);
    expect(await ids({ id: 'c' })).toEqual(['c']);
    expect(await ids({ id: 'c', kind: 'event' })).toEqual([]);
  });

  it('gives due runs earliest first, up to a limit', async () => {
    for (const [id, at] of [['late', 300], ['early', 100], ['mid', 200]] as const) {
      await store.createRun(newRun(id));
      await store.waits.parkRun(id, 1, T0 + at, [], T0);
    }
    expect((await store.waits.dueRuns(T0 + 1_000, 10)).map((r) => r.id)).toEqual(['early', 'mid', 'late']);
    expect((await store.waits.dueRuns(T0 + 1_000, 2)).map((r) => r.id)).toEqual(['early', 'mid']);
    expect((await store.waits.dueRuns(T0 + 150, 10)).map((r) => r.id)).toEqual(['early']);
  });

  it('keeps an event once by id', async () => {
    expect(await store.waits.recordEvent({ id: 'e1', name: 'payment.settled', payload: { order: 7 }, at: T0 })).toBe(true);
    expect(await store.waits.recordEvent({ id: 'e1', name: 'payment.settled', payload: { order: 8 }, at: T0 + 1 })).toBe(false);
    expect(await store.waits.recordEvent({ id: 'e2', name: 'payment.settled', payload: null, at: T0 + 1 })).toBe(true);
  });

  it('lists events by position: after one, of a name, the oldest or the newest, in recording order', async () => {
    expect(await store.waits.listEvents()).toEqual([]);
    // Sent-at times out of order: the position is the order they were recorded in, not their times.
    for (const [id, name, at] of [['e1', 'a', 30], ['e2', 'b', 10], ['e3', 'a', 20], ['e4', 'a', 40]] as const) {
      expect(await store.waits.recordEvent({ id, name, payload: { id }, at: T0 + at })).toBe(true);
    }
    expect(await store.waits.recordEvent({ id: 'e2', name: 'b', payload: 'again', at: T0 + 50 })).toBe(false);
    const all = await store.waits.listEvents();
    expect(all.map((e) => e.id)).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(all[1]).toEqual({ seq: all[1]!.seq, id: 'e2', name: 'b', payload: { id: 'e2' }, at: T0 + 10 });
    const seqs = all.map((e) => e.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(4);
    expect((await store.waits.listEvents({ after: seqs[1] })).map((e) => e.id)).toEqual(['e3', 'e4']);
    expect((await store.waits.listEvents({ after: seqs[3] })).map((e) => e.id)).toEqual([]);
    expect((await store.waits.listEvents({ name: 'a' })).map((e) => e.id)).toEqual(['e1', 'e3', 'e4']);
    expect((await store.waits.listEvents({ name: 'a', after: seqs[0] })).map((e) => e.id)).toEqual(['e3', 'e4']);
    expect((await store.waits.listEvents({ limit: 2 })).map((e) => e.id)).toEqual(['e1', 'e2']);
    expect((await store.waits.listEvents({ newest: true, limit: 2 })).map((e) => e.id)).toEqual(['e3', 'e4']);
    expect((await store.waits.listEvents({ newest: true, limit: 2, name: 'a' })).map((e) => e.id)).toEqual(['e3', 'e4']);
    expect((await store.waits.listEvents({ newest: true, limit: 9, name: 'a', after: seqs[2] })).map((e) => e.id)).toEqual(['e4']);
    expect(await store.waits.listEvents({ name: 'none' })).toEqual([]);
  });

  it('gives events recorded at once by several connections positions a reader following them misses none of', async () => {
    const other = await ns.open();
    const seen: string[] = [];
    let after = 0;
    const follow = async (): Promise<void> => {
      for (const e of await store.waits.listEvents({ after })) {
        seen.push(e.id);
        after = e.seq;
      }
    };
    const sends = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? store : other).waits.recordEvent({ id: `c${i}`, name: 'n', payload: i, at: T0 + i }));
    const following = (async () => {
      for (let i = 0; i < 40; i++) await follow();
    })();
    await Promise.all([...sends, following]);
    await follow();
    expect(seen.length).toBe(40);
    expect(new Set(seen).size).toBe(40);
  });

  it('prunes the waits of pruned runs and old events; a waiting run stays', async () => {
    await store.createRun(newRun('done'));
    await store.waits.openWait('done', 1, wait('wd', { key: 'x' }), T0);
    await store.finishRun('done', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 10 });
    await store.createRun(newRun('parked'));
    await store.waits.openWait('parked', 1, wait('wp', { key: 'y' }), T0);
    await store.waits.parkRun('parked', 1, null, ['wp'], T0 + 5);
    await store.waits.recordEvent({ id: 'old', name: 'n', payload: 1, at: T0 });
    expect(await store.prune(T0 + 100)).toBe(1);
    expect((await store.waits.listWaits({})).map((w) => w.id)).toEqual(['wp']);
    expect(await store.getRun('parked')).toMatchObject({ status: 'waiting' });
    const before = await store.waits.listEvents();
    expect(before).toEqual([]);
    // The pruned event's id may be sent again, and it comes after every position given before.
    await store.waits.recordEvent({ id: 'kept', name: 'n', payload: 0, at: T0 + 150 });
    expect(await store.waits.recordEvent({ id: 'old', name: 'n', payload: 2, at: T0 + 200 })).toBe(true);
    const after = await store.waits.listEvents({ name: 'n' });
    expect(after.map((e) => [e.id, e.payload])).toEqual([['kept', 0], ['old', 2]]);
    expect(after[0]!.seq).toBeGreaterThan(1);
  });
});
