import { describe, expect, it } from 'vitest';
import type { ToolchainError } from '../../src/common/errors.js';
import type { RunResult } from '../../src/run-model/result.js';
import { createMemoryStore, type LiveRun } from '../../src/store/memory.js';

// The memory store's own bookkeeping: runs begun by the engine enter the id index only when
// something looks one up, and the store still keeps exactly the newest `maxRuns` finished runs
// and every live one, whenever the lookups come.

const newRun = (i: number) => ({ id: `run-${i}`, chain: 'c', chain_hash: 'h', input: { i }, owner: 'me', lease_until: 1e12, now: i });
const succeeded = (i: number): RunResult => ({ run_id: `run-${i}`, chain: 'c', status: 'succeeded', outputs: { i }, steps: {}, duration_ms: 1 });

describe('memory store', () => {
  it('keeps the newest maxRuns finished runs and every live run when nothing is looked up until the end (more runs than a compaction)', async () => {
    const store = createMemoryStore(10);
    const live = new Map<number, LiveRun>();
    const parked = new Set([0, 1, 777, 2500, 2999]);
    for (let i = 0; i < 3000; i++) {
      const run = store.begin(newRun(i));
      run.record('a', { step: 'a', index: 0, status: 'succeeded', output: i, attempts: 1, started_at: i, duration_ms: 0 });
      if (parked.has(i)) live.set(i, run);
      else run.finished!(succeeded(i), i);
    }
    const listed = await store.listRuns({ limit: 1000 });
    const finished = [2998, 2997, 2996, 2995, 2994, 2993, 2992, 2991, 2990, 2989];
    expect(listed.map((r) => r.id).sort()).toEqual([...[...parked].map((i) => `run-${i}`), ...finished.map((i) => `run-${i}`)].sort());
    expect((await store.getRun('run-2998'))?.status).toBe('succeeded');
    expect((await store.getRun('run-2998'))?.outputs).toEqual({ i: 2998 });
    expect(await store.getRun('run-2988')).toBeUndefined();
    expect((await store.getRun('run-777'))?.status).toBe('running');
    expect(store.isLive('run-777')).toBe(false); // nothing bound to stop it
    expect((await store.getSteps('run-777')).map((s) => s.key)).toEqual(['a']);
    // A live run finished after the lookups is kept among the newest, pushing out the oldest.
    live.get(0)!.finished!(succeeded(0), 3000);
    expect((await store.getRun('run-0'))?.status).toBe('succeeded');
    expect(await store.getRun('run-2989')).toBeUndefined();
  });

  it('looked up in the middle, it goes on keeping the newest: runs begun before and after the lookup are forgotten alike', async () => {
    const store = createMemoryStore(5);
    const runs: LiveRun[] = [];
    for (let i = 0; i < 20; i++) runs.push(store.begin(newRun(i)));
    for (let i = 0; i < 10; i++) runs[i]!.finished!(succeeded(i), i);
    expect((await store.getRun('run-19'))?.status).toBe('running'); // indexes everything begun so far
    expect(await store.getRun('run-4')).toBeUndefined();
    for (let i = 20; i < 30; i++) runs.push(store.begin(newRun(i)));
    for (let i = 10; i < 30; i++) runs[i]!.finished!(succeeded(i), i);
    expect((await store.listRuns({ limit: 100 })).map((r) => r.id)).toEqual(['run-29', 'run-28', 'run-27', 'run-26', 'run-25']);
  });

  it('cancels a live run that was never looked up, through the store', async () => {
    const store = createMemoryStore();
    const run = store.begin(newRun(1));
    const reasons: ToolchainError[] = [];
    run.bind({ halt: (reason) => reasons.push(reason) });
    expect(store.isLive('run-1')).toBe(true);
    const asked = await store.requestCancel('run-1', 5);
    expect(asked?.cancel_requested).toBe(true);
    expect(reasons.map((r) => r.code)).toEqual(['ABORTED']);
  });

  it('prunes runs that were never looked up, and a pruned run stays gone when it is forgotten later', async () => {
    const store = createMemoryStore(3);
    for (let i = 0; i < 3; i++) store.begin(newRun(i)).finished!(succeeded(i), i * 10);
    expect(await store.prune(15)).toBe(2);
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['run-2']);
    for (let i = 3; i < 6; i++) store.begin(newRun(i)).finished!(succeeded(i), 100 + i);
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['run-5', 'run-4', 'run-3']);
  });

  it('keeps each step result under its key, when keys start to differ from the step names part-way (for_each elements, a sub-chain)', async () => {
    const store = createMemoryStore();
    const run = store.begin(newRun(1));
    const rec = (step: string, output: number) => ({ step, index: 0, status: 'succeeded' as const, output, attempts: 1, started_at: 0, duration_ms: 0 });
    run.record('a', rec('a', 1));
    run.record('each[0]', rec('each', 2));
    run.record('sub›x', rec('x', 3));
    run.record('a', rec('a', 4)); // a later record of a key replaces the earlier one
    const steps = await store.getSteps('run-1');
    expect(steps.map((s) => [s.key, s.output])).toEqual([['a', 4], ['each[0]', 2], ['sub›x', 3]]);
  });

  it('reads stay true as steps keep coming after the first read, through the engine and through recordSteps', async () => {
    const store = createMemoryStore();
    const run = store.begin(newRun(2));
    const rec = (step: string, status: 'succeeded' | 'failed', output: number) => ({ key: step, step, index: 0, status, output, attempts: 1, started_at: 0, duration_ms: 0 });
    run.record('a', rec('a', 'failed', 1));
    expect((await store.getSteps('run-2')).map((s) => [s.key, s.status])).toEqual([['a', 'failed']]);
    run.record('b', rec('b', 'succeeded', 2));
    expect(await store.recordSteps([{ run_id: 'run-2', epoch: 1, steps: [rec('a', 'succeeded', 3), rec('b', 'succeeded', 9), rec('c', 'succeeded', 4)] }])).toEqual(['ok']);
    // A failed step recorded again succeeds; a success is never replaced.
    expect((await store.getSteps('run-2')).map((s) => [s.key, s.status, s.output])).toEqual([
      ['a', 'succeeded', 3],
      ['b', 'succeeded', 2],
      ['c', 'succeeded', 4],
    ]);
  });
});
