import { describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import type { ForEachProgress, RunEvent } from '../../src/run-model/events.js';
import { useQueueCluster } from '../helpers/queue-cluster.js';

// A queued run's events reach whoever runs it with a listener (the CLI's live progress for queued runs):
// the worker sends them as the job's progress, the submitting engine relays them as a local run
// emits them. A run nobody listens to sends nothing.

const cluster = useQueueCluster('queue-events');

const brief = (e: RunEvent): string => ('step' in e ? `${e.type} ${String(e.step)}` : e.type);

describe('events of a queued run', () => {
  it('reach the listener live and in order, as a local run emits them: one run:started, each step started then ended, one run:finished', async () => {
    const worker = cluster.spawn([]);
    await worker.ready;
    const events: { e: RunEvent; at: number }[] = [];
    const result = await cluster.engine.run('five', { start: 1, ms: 150 }, { runId: 'events-five', onEvent: (e) => events.push({ e, at: Date.now() }) });
    expect(result).toMatchObject({ status: 'succeeded', outputs: { value: 6 } });
    expect(events.map(({ e }) => brief(e))).toEqual([
      'run:started',
      ...['s1', 's2', 's3', 's4', 's5'].flatMap((s) => [`step:started ${s}`, `step:succeeded ${s}`]),
      'run:finished',
    ]);
    // Live: s1's end was heard while the run still had most of its 750 ms to go.
    const s1 = events.find(({ e }) => brief(e) === 'step:succeeded s1')!;
    const finished = events.at(-1)!;
    expect(finished.at - s1.at).toBeGreaterThanOrEqual(450);
    expect(s1.e).toMatchObject({ run_id: 'events-five', attempts: 1, output: { value: 2, pid: worker.pid } });
    expect(finished.e).toMatchObject({ type: 'run:finished', run_id: 'events-five', status: 'succeeded', outputs: { value: 6 } });
  });

  it("a distributed for_each's elements are counted as they come back, and the run starts and finishes once for the listener", async () => {
    const pool = [0, 1].map(() => cluster.spawn(['--concurrency', '4']));
    await Promise.all(pool.map((w) => w.ready));
    const events: RunEvent[] = [];
    const progress: ForEachProgress[] = [];
    const result = await cluster.engine.run('spread', { n: 12, ms: 50 }, { runId: 'events-spread', onEvent: (e) => events.push(e), onProgress: (p) => progress.push(p) });
    expect(result).toMatchObject({ status: 'succeeded' });
    expect(events.filter((e) => e.type === 'run:started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'run:finished')).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    expect(events.filter((e) => e.type === 'step:succeeded').map((e) => (e as { step: string }).step)).toEqual(['list', 'each']);
    expect(progress.at(-1)).toMatchObject({ run_id: 'events-spread', step: 'each', done: 12, total: 12 });
  });

  it('a run nobody listens to sends no events', async () => {
    const worker = cluster.spawn([]);
    await worker.ready;
    const queue = new Queue('toolchain', { connection: { url: cluster.redis.url } });
    try {
      expect(await cluster.engine.run('five', {}, { runId: 'quiet-five' })).toMatchObject({ status: 'succeeded' });
      expect((await queue.getJob('quiet-five'))?.progress).toBe(0);
      await cluster.engine.run('five', {}, { runId: 'heard-five', onEvent: () => undefined });
      expect((await queue.getJob('heard-five'))?.progress).toMatchObject({ event: { type: 'run:finished', run_id: 'heard-five' } });
    } finally {
      await queue.close();
    }
  });
});
