import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BLOB_THRESHOLD, type NewRun, type RunStore, type StoredStep } from '../../src/store/index.js';
import { DRIVERS, type Namespace } from '../fixtures/store/drivers.js';

// One suite, every driver: memory, SQLite (a temporary file), PostgreSQL (a schema of
// its own on 127.0.0.1:5432) and Redis (a key prefix of its own on 127.0.0.1:6379).

const T0 = 1_700_000_000_000;

function newRun(id: string, over: Partial<NewRun> = {}): NewRun {
  return { id, chain: 'city_brief', chain_hash: 'h1', input: { question: 'Osaka?' }, owner: 'host:1:a', lease_until: T0 + 30_000, now: T0, ...over };
}

function step(key: string, over: Partial<StoredStep> = {}): StoredStep {
  return { key, step: key.replace(/\[\d+\]$/, ''), index: 0, status: 'succeeded', attempts: 1, output: { value: key }, started_at: T0, duration_ms: 5, ...over };
}

describe.each(DRIVERS)('run store: $name', (driver) => {
  let ns: Namespace;
  let store: RunStore;

  beforeEach(async () => {
    ns = driver.namespace();
    store = await ns.open();
  });
  afterEach(async () => {
    await ns.drop();
  });

  it('creates a run once: running, owned, epoch 1; a second create returns it unchanged', async () => {
    const first = await store.createRun(newRun('r1'));
    const expected = {
      id: 'r1',
      chain: 'city_brief',
      chain_hash: 'h1',
      input: { question: 'Osaka?' },
      status: 'running',
      created_at: T0,
      updated_at: T0,
      finished_at: null,
      outputs: null,
      error: null,
      owner: 'host:1:a',
      lease_until: T0 + 30_000,
      epoch: 1,
      cancel_requested: false,
      queue: null,
      rerun_of: null,
      rerun_from: null,
    };
    expect(first).toEqual({ created: true, run: expected });
    expect(await store.getRun('r1')).toEqual(expected);
    const again = await store.createRun(newRun('r1', { owner: 'other:2:b', input: { question: 'Paris?' }, now: T0 + 5 }));
    expect(again).toEqual({ created: false, run: expected });
    expect(await store.getRun('missing')).toBeUndefined();
  });

  it('keeps inputs as JSON: null, nested values, unicode; no input at all', async () => {
    const input = { list: [1, 'two', { three: null }], text: 'Ōsaka ›', n: 1.5, yes: true };
    await store.createRun(newRun('json', { input }));
    await store.createRun(newRun('null', { input: null }));
    await store.createRun(newRun('none', { input: undefined }));
    expect((await store.getRun('json'))?.input).toEqual(input);
    expect((await store.getRun('null'))?.input).toBeNull();
    expect((await store.getRun('none'))?.input).toBeUndefined();
  });

  it('of two concurrent creates of one id, exactly one creates the run', async () => {
    const other = await ns.open();
    for (let i = 0; i < 10; i++) {
      const outcomes = await Promise.all([store.createRun(newRun(`c${i}`, { owner: 'a' })), other.createRun(newRun(`c${i}`, { owner: 'b' }))]);
      expect(outcomes.filter((o) => o.created)).toHaveLength(1);
      const winner = outcomes.find((o) => o.created)!.run.owner;
      expect(outcomes.map((o) => o.run.owner)).toEqual([winner, winner]);
    }
  });

  it('claims by compare-and-set on the epoch, and clears the finish fields and the cancel flag', async () => {
    await store.createRun(newRun('r'));
    await store.requestCancel('r', T0 + 1);
    expect(await store.finishRun('r', 1, { status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'boom', step: 'b' }, finished_at: T0 + 2 })).toBe('ok');
    const claimed = await store.claimRun('r', { owner: 'host:2:b', lease_until: T0 + 60_000, now: T0 + 3, expected_epoch: 1 });
    expect(claimed).toEqual({
      claimed: true,
      run: expect.objectContaining({ status: 'running', owner: 'host:2:b', lease_until: T0 + 60_000, updated_at: T0 + 3, epoch: 2, cancel_requested: false, finished_at: null, outputs: null, error: null }),
    });
    expect(await store.getRun('r')).toEqual(claimed.run);
    const stale = await store.claimRun('r', { owner: 'host:3:c', lease_until: T0 + 90_000, now: T0 + 4, expected_epoch: 1 });
    expect(stale).toEqual({ claimed: false, run: claimed.run });
    expect(await store.claimRun('nothing', { owner: 'x', lease_until: 0, now: 0, expected_epoch: 1 })).toEqual({ claimed: false, run: undefined });
  });

  it('of two concurrent claims with the same expected epoch, exactly one wins', async () => {
    const other = await ns.open();
    for (let i = 0; i < 10; i++) {
      await store.createRun(newRun(`k${i}`));
      const claim = (owner: string) => ({ owner, lease_until: T0 + 1, now: T0 + 1, expected_epoch: 1 });
      const outcomes = await Promise.all([store.claimRun(`k${i}`, claim('a')), other.claimRun(`k${i}`, claim('b'))]);
      expect(outcomes.filter((o) => o.claimed)).toHaveLength(1);
      const run = await store.getRun(`k${i}`);
      expect(run?.epoch).toBe(2);
      expect(run?.owner).toBe(outcomes.find((o) => o.claimed)!.run!.owner);
    }
  });

  it('records step results in order, every field kept; of two successes of a key the first wins', async () => {
    await store.createRun(newRun('r'));
    const a = step('locate', { output: { city: 'Osaka', tz: 'Asia/Tokyo' }, fallback: 'output' });
    const b = step('first_city›locate', { index: 1, status: 'failed', attempts: 3, output: undefined, error: { code: 'TIMEOUT', message: 'took more than 1 s' } as StoredStep['error'] });
    const c = step('lookup[2]', { index: 2, status: 'skipped', attempts: 0, output: undefined, reason: 'when' });
    const d = step('continue', { index: 3, status: 'failed', output: { error: { code: 'TOOL_ERROR', message: 'x' } }, error: { code: 'TOOL_ERROR', message: 'x' } as StoredStep['error'] });
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [a, b] }])).toEqual(['ok']);
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [c, step('locate', { output: 'second' }), d, step('d2', { output: null }), step('d2', { output: 'later' })] }])).toEqual(['ok']);
    const steps = await store.getSteps('r');
    expect(steps.map((s) => s.key)).toEqual(['locate', 'first_city›locate', 'lookup[2]', 'continue', 'd2']);
    expect(steps).toEqual([a, b, c, d, step('d2', { output: null })]);
    expect(await store.getSteps('missing')).toEqual([]);
    // Two batches of one run in one call: the first success of a key still wins.
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('twice', { output: 1 })] }, { run_id: 'r', epoch: 1, steps: [step('twice', { output: 2 }), step('locate', { output: 3 })] }])).toEqual(['ok', 'ok']);
    expect((await store.getSteps('r')).slice(5)).toEqual([step('twice', { output: 1 })]);
  });

  it('keeps the order steps were first recorded in across writers and a takeover', async () => {
    const other = await ns.open();
    await store.createRun(newRun('r'));
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('m')] }]);
    await other.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('z'), step('a')] }]);
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('b'), step('flaky', { status: 'failed', output: undefined })] }]);
    await other.claimRun('r', { owner: 'host:2:b', lease_until: T0 + 60_000, now: T0 + 1, expected_epoch: 1 });
    expect(await other.recordSteps([{ run_id: 'r', epoch: 2, steps: [step('c'), step('flaky', { output: 'now' }), step('m', { output: 'again' })] }])).toEqual(['ok']);
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }])).toEqual(['fenced']);
    // The same in one call with other entries: each single result is fenced, or kept, on its own.
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }, { run_id: 'r', epoch: 2, steps: [step('d')] }, { run_id: 'r', epoch: 2, steps: [step('z', { output: 'again' })] }])).toEqual(['fenced', 'ok', 'ok']);
    expect((await store.getSteps('r')).map((s) => [s.key, s.output])).toEqual([
      ['m', { value: 'm' }],
      ['z', { value: 'z' }],
      ['a', { value: 'a' }],
      ['b', { value: 'b' }],
      ['flaky', 'now'],
      ['c', { value: 'c' }],
      ['d', { value: 'd' }],
    ]);
  });

  it('replaces a failed or skipped result by a later one, in its place, and keeps a success for good', async () => {
    await store.createRun(newRun('r'));
    const failed = (key: string, message: string) => step(key, { status: 'failed', output: undefined, error: { code: 'TOOL_ERROR', message } as StoredStep['error'] });
    const skipped = (key: string) => step(key, { status: 'skipped', attempts: 0, output: undefined, reason: 'dependency' });
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('first'), failed('flaky', 'down'), skipped('after'), step('last')] }]);
    // A redrive: the failed step now succeeds, the skipped one runs and fails.
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('flaky', { output: 'up', attempts: 2 }), failed('after', 'bad input')] }]);
    expect(await store.getSteps('r')).toEqual([step('first'), step('flaky', { output: 'up', attempts: 2 }), failed('after', 'bad input'), step('last')]);
    // Once succeeded, a result stays; a failure replaced twice in one call ends as the last.
    await store.recordSteps([
      { run_id: 'r', epoch: 1, steps: [failed('flaky', 'late'), failed('after', 'second'), skipped('after')] },
      { run_id: 'r', epoch: 1, steps: [step('first', { output: 'again' })] },
    ]);
    expect(await store.getSteps('r')).toEqual([step('first'), step('flaky', { output: 'up', attempts: 2 }), skipped('after'), step('last')]);
    // In one batch: a failure then a success of the same key keeps the success, and a success then a failure too.
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [failed('x', 'no'), step('x'), step('y'), failed('y', 'no')] }]);
    expect((await store.getSteps('r')).slice(4)).toEqual([step('x'), step('y')]);
  });

  it('fences a write that races a claim: a result reported recorded is there for the new owner, a fenced one is not', async () => {
    const other = await ns.open();
    for (let i = 0; i < 10; i++) {
      const id = `race${i}`;
      await store.createRun(newRun(id));
      const [[result], claim] = await Promise.all([
        other.recordSteps([{ run_id: id, epoch: 1, steps: [step('a')] }]),
        store.claimRun(id, { owner: 'new', lease_until: T0, now: T0, expected_epoch: 1 }),
      ]);
      expect(claim.claimed).toBe(true);
      expect((await store.getSteps(id)).map((s) => s.key)).toEqual(result === 'ok' ? ['a'] : []);
    }
  });

  it('fences writes under an old epoch: steps, finish and lease renewal are refused, nothing changes', async () => {
    await store.createRun(newRun('r'));
    await store.createRun(newRun('s'));
    await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('a')] }]);
    await store.claimRun('r', { owner: 'new', lease_until: T0 + 9, now: T0 + 1, expected_epoch: 1 });
    const results = await store.recordSteps([
      { run_id: 'r', epoch: 1, steps: [step('b')] },
      { run_id: 's', epoch: 1, steps: [step('b')] },
      { run_id: 'nothing', epoch: 1, steps: [step('b')] },
      { run_id: 'r', epoch: 2, steps: [step('c')] },
    ]);
    expect(results).toEqual(['fenced', 'ok', 'fenced', 'ok']);
    expect((await store.getSteps('r')).map((s) => s.key)).toEqual(['a', 'c']);
    expect((await store.getSteps('s')).map((s) => s.key)).toEqual(['b']);
    const before = await store.getRun('r');
    expect(await store.finishRun('r', 1, { status: 'succeeded', outputs: { x: 1 }, error: null, finished_at: T0 + 5 })).toBe('fenced');
    expect(await store.renewLease('r', 1, T0 + 99, T0 + 6)).toEqual({ result: 'fenced', cancel_requested: false });
    expect(await store.finishRun('nothing', 1, { status: 'succeeded', outputs: null, error: null, finished_at: T0 })).toBe('fenced');
    expect(await store.renewLease('nothing', 1, T0, T0)).toEqual({ result: 'fenced', cancel_requested: false });
    expect(await store.getRun('r')).toEqual(before);
    expect(await store.recordSteps([])).toEqual([]);
  });

  it('finishes a run: status, outputs, error, time; owner and lease cleared', async () => {
    await store.createRun(newRun('ok'));
    await store.createRun(newRun('bad'));
    expect(await store.finishRun('ok', 1, { status: 'succeeded', outputs: { city: 'Osaka', n: [1, 2] }, error: null, finished_at: T0 + 10 })).toBe('ok');
    expect(await store.finishRun('bad', 1, { status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'boom', step: 'locate' }, finished_at: T0 + 20 })).toBe('ok');
    expect(await store.getRun('ok')).toEqual(
      expect.objectContaining({ status: 'succeeded', outputs: { city: 'Osaka', n: [1, 2] }, error: null, finished_at: T0 + 10, updated_at: T0 + 10, owner: null, lease_until: null, epoch: 1 }),
    );
    expect(await store.getRun('bad')).toEqual(expect.objectContaining({ status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'boom', step: 'locate' }, finished_at: T0 + 20 }));
  });

  it("writes a run's end with its last steps: alone, with other runs, with no step left, with a big output; a fenced entry writes neither", async () => {
    for (const id of ['one', 'empty', 'many1', 'many2', 'big', 'old', 'other']) await store.createRun(newRun(id));
    const end = (n: number) => ({ status: 'succeeded' as const, outputs: { n }, error: null, finished_at: T0 + n });
    expect(await store.recordSteps([{ run_id: 'one', epoch: 1, steps: [step('a')], end: end(1) }])).toEqual(['ok']);
    expect(await store.recordSteps([{ run_id: 'empty', epoch: 1, steps: [], end: end(2) }])).toEqual(['ok']);
    const bigOutput = { text: 'x'.repeat(BLOB_THRESHOLD + 10) };
    await store.claimRun('old', { owner: 'new', lease_until: T0 + 9, now: T0 + 1, expected_epoch: 1 });
    const results = await store.recordSteps([
      { run_id: 'many1', epoch: 1, steps: [step('a'), step('b')], end: end(3) },
      { run_id: 'many2', epoch: 1, steps: [step('a')] },
      { run_id: 'big', epoch: 1, steps: [step('a', { output: bigOutput })], end: { status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'boom' }, finished_at: T0 + 4 } },
      { run_id: 'old', epoch: 1, steps: [step('a')], end: end(5) },
    ]);
    expect(results).toEqual(['ok', 'ok', 'ok', 'fenced']);
    const finished = { owner: null, lease_until: null };
    expect(await store.getRun('one')).toEqual(expect.objectContaining({ status: 'succeeded', outputs: { n: 1 }, finished_at: T0 + 1, ...finished }));
    expect(await store.getRun('empty')).toEqual(expect.objectContaining({ status: 'succeeded', outputs: { n: 2 }, ...finished }));
    expect(await store.getRun('many1')).toEqual(expect.objectContaining({ status: 'succeeded', outputs: { n: 3 }, ...finished }));
    expect(await store.getRun('many2')).toEqual(expect.objectContaining({ status: 'running', owner: 'host:1:a' }));
    expect(await store.getRun('big')).toEqual(expect.objectContaining({ status: 'failed', error: { code: 'TOOL_ERROR', message: 'boom' }, ...finished }));
    expect(await store.getRun('old')).toEqual(expect.objectContaining({ status: 'running', owner: 'new', epoch: 2 }));
    expect((await store.getSteps('one')).map((s) => s.key)).toEqual(['a']);
    expect((await store.getSteps('many1')).map((s) => s.key)).toEqual(['a', 'b']);
    expect((await store.getSteps('big'))[0]?.output).toEqual(bigOutput);
    expect(await store.getSteps('old')).toEqual([]);
    // An end under an old epoch, alone: refused too.
    expect(await store.recordSteps([{ run_id: 'old', epoch: 1, steps: [], end: end(6) }])).toEqual(['fenced']);
    expect(await store.getRun('old')).toEqual(expect.objectContaining({ status: 'running', epoch: 2 }));
  });

  it('creates several runs in one call where the driver offers it (SQLite), each as createRun would', async () => {
    expect(store.createRuns !== undefined).toBe(driver.name === 'sqlite');
    if (store.createRuns === undefined) return;
    await store.createRun(newRun('taken', { owner: 'first:1:a' }));
    const outcomes = await store.createRuns([newRun('n1'), newRun('taken'), newRun('n2', { queue: 'q' })]);
    expect(outcomes.map((o) => [o.created, o.run.id, o.run.owner, o.run.queue])).toEqual([
      [true, 'n1', 'host:1:a', null],
      [false, 'taken', 'first:1:a', null],
      [true, 'n2', 'host:1:a', 'q'],
    ]);
    expect(await store.getRun('n2')).toEqual(outcomes[2]!.run);
  });

  it('renews a lease, reporting a cancel request; a finished run has no lease to renew', async () => {
    await store.createRun(newRun('r'));
    expect(await store.renewLease('r', 1, T0 + 60_000, T0 + 30_000)).toEqual({ result: 'ok', cancel_requested: false });
    expect(await store.getRun('r')).toEqual(expect.objectContaining({ lease_until: T0 + 60_000, updated_at: T0 + 30_000 }));
    const asked = await store.requestCancel('r', T0 + 31_000);
    expect(asked).toEqual(expect.objectContaining({ id: 'r', status: 'running', cancel_requested: true, updated_at: T0 + 31_000 }));
    expect(await store.renewLease('r', 1, T0 + 90_000, T0 + 32_000)).toEqual({ result: 'ok', cancel_requested: true });
    await store.finishRun('r', 1, { status: 'cancelled', outputs: null, error: { code: 'ABORTED', message: 'cancelled' }, finished_at: T0 + 33_000 });
    expect(await store.renewLease('r', 1, T0 + 99_000, T0 + 34_000)).toEqual({ result: 'fenced', cancel_requested: true });
    expect((await store.getRun('r'))?.lease_until).toBeNull();
  });

  it('asks only a running run to stop', async () => {
    await store.createRun(newRun('done'));
    await store.finishRun('done', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 1 });
    expect(await store.requestCancel('done', T0 + 2)).toEqual(expect.objectContaining({ status: 'succeeded', cancel_requested: false, updated_at: T0 + 1 }));
    expect(await store.requestCancel('missing', T0)).toBeUndefined();
  });

  it('lists runs newest first, by status and chain, up to a limit (50 by default)', async () => {
    for (let i = 0; i < 55; i++) await store.createRun(newRun(`run-${String(i).padStart(2, '0')}`, { chain: i % 2 === 0 ? 'even' : 'odd', now: T0 + i * 1000 }));
    for (const i of [3, 4, 5]) await store.finishRun(`run-0${i}`, 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 100_000 });
    await store.finishRun('run-06', 1, { status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'x' }, finished_at: T0 + 100_000 });
    const all = await store.listRuns();
    expect(all).toHaveLength(50);
    expect(all[0]?.id).toBe('run-54');
    expect(all.map((r) => r.created_at)).toEqual([...all.map((r) => r.created_at)].sort((a, b) => b - a));
    expect((await store.listRuns({ limit: 3 })).map((r) => r.id)).toEqual(['run-54', 'run-53', 'run-52']);
    expect((await store.listRuns({ status: 'succeeded' })).map((r) => r.id)).toEqual(['run-05', 'run-04', 'run-03']);
    expect((await store.listRuns({ status: 'succeeded', chain: 'even' })).map((r) => r.id)).toEqual(['run-04']);
    expect((await store.listRuns({ chain: 'odd', limit: 2 })).map((r) => r.id)).toEqual(['run-53', 'run-51']);
    expect((await store.listRuns({ status: 'failed' }))[0]).toEqual(expect.objectContaining({ id: 'run-06', status: 'failed' }));
    expect(await store.listRuns({ chain: 'nothing' })).toEqual([]);
    expect((await store.listRuns({ status: 'running', limit: 100 })).length).toBe(51);
    // A redriven run is running again, and listed as such.
    await store.claimRun('run-06', { owner: 'x', lease_until: T0, now: T0, expected_epoch: 1 });
    expect(await store.listRuns({ status: 'failed' })).toEqual([]);
    expect((await store.listRuns({ status: 'running', chain: 'even', limit: 100 })).map((r) => r.id)).toContain('run-06');
    await expect(store.listRuns({ limit: 0 })).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('keeps the queue a run belongs to: set by create, by a claim that names one, cleared by one that names none; lists one queue\'s runs', async () => {
    for (let i = 0; i < 12; i++) await store.createRun(newRun(`q-${String(i).padStart(2, '0')}`, { now: T0 + i, ...(i % 3 === 0 ? {} : { queue: i % 3 === 1 ? 'toolchain' : 'other' }) }));
    expect((await store.getRun('q-01'))?.queue).toBe('toolchain');
    expect((await store.getRun('q-00'))?.queue).toBeNull();
    const ids = async (queue: string, limit?: number): Promise<string[]> => (await store.listRuns({ status: 'running', queue, ...(limit ? { limit } : {}) })).map((r) => r.id);
    expect(await ids('toolchain')).toEqual(['q-10', 'q-07', 'q-04', 'q-01']);
    expect(await ids('other', 2)).toEqual(['q-11', 'q-08']);
    expect((await store.listRuns({ queue: 'other', chain: 'city_brief' })).map((r) => r.id)).toEqual(['q-11', 'q-08', 'q-05', 'q-02']);
    expect(await ids('nothing')).toEqual([]);
    // A worker of another queue takes a run over; a process outside any queue takes one from a queue.
    expect(await store.claimRun('q-01', { owner: 'w', lease_until: T0, now: T0 + 20, expected_epoch: 1, queue: 'other' })).toEqual({ claimed: true, run: expect.objectContaining({ queue: 'other' }) });
    expect(await store.claimRun('q-02', { owner: 'cli', lease_until: T0, now: T0 + 20, expected_epoch: 1 })).toEqual({ claimed: true, run: expect.objectContaining({ queue: null }) });
    expect(await ids('toolchain')).toEqual(['q-10', 'q-07', 'q-04']);
    expect(await ids('other')).toEqual(['q-11', 'q-08', 'q-05', 'q-01']);
    await store.finishRun('q-11', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 30 });
    expect(await ids('other')).toEqual(['q-08', 'q-05', 'q-01']);
    expect((await store.getRun('q-11'))?.queue).toBe('other');
  });

  it("keeps a re-run's origin (the run and the step it started from) and lists a run's re-runs, newest first; pruned ones go", async () => {
    await store.createRun(newRun('origin'));
    await store.createRun(newRun('again-1', { now: T0 + 1, rerun_of: 'origin', rerun_from: 'b' }));
    await store.createRun(newRun('again-2', { now: T0 + 2, rerun_of: 'origin' }));
    await store.createRun(newRun('again-of-again', { now: T0 + 3, rerun_of: 'again-1', rerun_from: 'c' }));
    expect(await store.getRun('again-1')).toEqual(expect.objectContaining({ rerun_of: 'origin', rerun_from: 'b' }));
    expect(await store.getRun('again-2')).toEqual(expect.objectContaining({ rerun_of: 'origin', rerun_from: null }));
    expect(await store.getRun('origin')).toEqual(expect.objectContaining({ rerun_of: null, rerun_from: null }));
    expect((await store.listRuns({ rerun_of: 'origin' })).map((r) => r.id)).toEqual(['again-2', 'again-1']);
    expect((await store.listRuns({ rerun_of: 'origin', limit: 1 })).map((r) => r.id)).toEqual(['again-2']);
    expect((await store.listRuns({ rerun_of: 'again-1' })).map((r) => r.id)).toEqual(['again-of-again']);
    expect(await store.listRuns({ rerun_of: 'again-of-again' })).toEqual([]);
    // A claim keeps the origin; the other filters apply too.
    await store.claimRun('again-1', { owner: 'x', lease_until: T0, now: T0 + 4, expected_epoch: 1 });
    expect(await store.getRun('again-1')).toEqual(expect.objectContaining({ rerun_of: 'origin', rerun_from: 'b' }));
    await store.finishRun('again-2', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 5 });
    expect((await store.listRuns({ rerun_of: 'origin', status: 'succeeded' })).map((r) => r.id)).toEqual(['again-2']);
    expect(await store.prune(T0 + 10)).toBe(1);
    expect((await store.listRuns({ rerun_of: 'origin' })).map((r) => r.id)).toEqual(['again-1']);
  });

  it('prunes runs that finished before a time, with their steps; running ones stay', async () => {
    for (const id of ['old-ok', 'old-failed', 'new-ok', 'running']) {
      await store.createRun(newRun(id));
      await store.recordSteps([{ run_id: id, epoch: 1, steps: [step('a'), step('b')] }]);
    }
    await store.finishRun('old-ok', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 1_000 });
    await store.finishRun('old-failed', 1, { status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: 'x' }, finished_at: T0 + 2_000 });
    await store.finishRun('new-ok', 1, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 9_000 });
    expect(await store.prune(T0 + 5_000)).toBe(2);
    expect(await store.getRun('old-ok')).toBeUndefined();
    expect(await store.getSteps('old-failed')).toEqual([]);
    expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['new-ok', 'running']);
    expect(await store.listRuns({ status: 'succeeded' })).toHaveLength(1);
    expect(await store.getSteps('new-ok')).toHaveLength(2);
    expect(await store.prune(T0 + 5_000)).toBe(0);
    // The id of a pruned run is free again.
    expect((await store.createRun(newRun('old-ok'))).created).toBe(true);
  });

  it('stores a big output once, shared by the steps that have it, and gives it back', async () => {
    const big = { rows: Array.from({ length: 3000 }, (_, i) => ({ i, text: `row ${i} ${'x'.repeat(80)}` })) };
    expect(JSON.stringify(big).length).toBeGreaterThan(BLOB_THRESHOLD);
    const small = { text: 'y'.repeat(BLOB_THRESHOLD - 20) };
    await store.createRun(newRun('one'));
    await store.createRun(newRun('two'));
    await store.recordSteps([
      { run_id: 'one', epoch: 1, steps: [step('a', { output: big }), step('b', { output: big }), step('c', { output: small })] },
      { run_id: 'two', epoch: 1, steps: [step('a', { output: big })] },
    ]);
    // A failed result with a big output of its own, replaced by a success with the shared one.
    const other = { rows: big.rows.map((r) => ({ ...r, i: r.i + 100_000 })) };
    await store.recordSteps([{ run_id: 'one', epoch: 1, steps: [step('d', { status: 'failed', output: other, error: { code: 'TOOL_ERROR', message: 'x' } as StoredStep['error'] })] }]);
    expect((await store.getSteps('one'))[3]?.output).toEqual(other);
    await store.recordSteps([{ run_id: 'one', epoch: 1, steps: [step('d', { output: big })] }]);
    expect((await store.getSteps('one')).map((s) => s.output)).toEqual([big, big, small, big]);
    expect((await store.getSteps('two'))[0]).toEqual(step('a', { output: big }));
    // Memory keeps values by reference: it has no blobs to count. The SQL stores delete the failed
    // result's blob when they prune, Redis as soon as no step refers to it.
    expect(await ns.blobCount()).toBe(driver.name === 'memory' ? undefined : driver.name === 'redis' ? 1 : 2);
    for (const id of ['one', 'two']) await store.finishRun(id, 1, { status: 'succeeded', outputs: {}, error: null, finished_at: id === 'one' ? T0 + 1 : T0 + 10 });
    expect(await store.prune(T0 + 5)).toBe(1);
    expect((await store.getSteps('two'))[0]?.output).toEqual(big);
    expect(await store.prune(T0 + 50)).toBe(1);
    expect(await ns.blobCount()).toBe(driver.name === 'memory' ? undefined : 0);
  });

  it('names itself without a password', async () => {
    expect(store.url).not.toMatch(/:[^/@:]+@/);
    expect(store.url.startsWith(driver.name === 'postgres' ? 'postgres://' : driver.name === 'redis' ? 'redis://' : `${driver.name}:`)).toBe(true);
  });
});
