import { join } from 'node:path';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { readEffects, until, useQueueCluster } from '../helpers/queue-cluster.js';

// Someone with write access to the queue's Redis adds `element` jobs of their own. A worker used
// to run any tool step of any chain with the forger's arguments, and recorded the result with the
// epoch it had just read, so it was never fenced. Now a worker runs only element i of a
// `distribute: true` for_each of the chain the run records, i an index into the array the run's
// record selects, with the arguments the plan gives that element, while the run is at the epoch
// that dispatched it; anything else is answered with an error and runs nothing.

const cluster = useQueueCluster('hostile-forged-elements', { perTest: false });
let queue: Queue | undefined;
let redis: Redis | undefined;
afterAll(async () => {
  await queue?.close();
  redis?.disconnect();
});

interface ElementData {
  readonly v: 1;
  readonly kind: 'element';
  readonly runId: string;
  readonly chain: string;
  readonly hash: string;
  readonly step: string;
  readonly stepIndex: number;
  readonly epoch: number;
  readonly element: { readonly index: number; readonly args: Record<string, unknown> };
}

interface ElementAnswer {
  readonly index: number;
  readonly outcome: { readonly ok: boolean; readonly output?: { value: number }; readonly error?: { code: string; message: string } };
}

async function answerOf(id: string): Promise<ElementAnswer> {
  let answer: ElementAnswer | undefined;
  await until(`the answer of job ${id}`, async () => {
    const job = await Job.fromId(queue!, id);
    answer = job?.finishedOn ? (job.returnvalue as ElementAnswer) : undefined;
    return answer !== undefined;
  });
  return answer!;
}

describe('forged element jobs', () => {
  it('run nothing but what the run and its plan say', async () => {
    const log = join(cluster.root, 'effects.log');
    const worker = cluster.spawn(['--concurrency', '16'], { EFFECT_LOG: log });
    await worker.ready;
    redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
    queue = new Queue('toolchain', { connection: redis });
    // A run parked at its distributed for_each (4 elements of 5 s each), and a run of another chain.
    const victim = await cluster.engine.submit('spread', { n: 4, ms: 5000 }, { runId: 'victim' });
    await cluster.engine.submit('slow', {}, { runId: 'bystander' });
    let genuine: ElementData | undefined;
    await until('the run to dispatch its elements', async () => {
      const jobs = await queue!.getJobs(['active', 'waiting']);
      genuine = jobs.map((j) => j.data as ElementData).find((d) => d.kind === 'element' && d.runId === 'victim');
      return genuine !== undefined;
    });
    const g = genuine!;
    const forge = async (id: string, data: Partial<ElementData>): Promise<ElementAnswer> => {
      await queue!.add('element', { ...g, ...data }, { jobId: id });
      return answerOf(id);
    };

    // No element 99; no element of a step that is not a distributed for_each (the plain `list`
    // step, the other run's `wait`); not the run's chain; not the epoch that dispatched it.
    const refusals = {
      index: await forge('forged-index', { element: { index: 99, args: { value: 5 } } }),
      negative: await forge('forged-negative', { element: { index: -1, args: {} } }),
      plainStep: await forge('forged-plain-step', { step: 'list', stepIndex: 0, element: { index: 0, args: { n: 1e9 } } }),
      otherRun: await forge('forged-other-run', { runId: 'bystander', step: 'wait', element: { index: 0, args: { ms: 0 } } }),
      otherChain: await forge('forged-other-chain', { chain: 'slow', step: 'wait', element: { index: 0, args: { ms: 0 } } }),
      staleEpoch: await forge('forged-stale-epoch', { epoch: g.epoch - 1, element: { index: 2, args: { value: 1 } } }),
    };
    const codes = Object.fromEntries(Object.entries(refusals).map(([k, a]) => [k, a.outcome.ok ? 'ran' : a.outcome.error!.code]));
    expect(codes).toEqual({ index: 'QUEUE_JOB_FAILED', negative: 'QUEUE_JOB_FAILED', plainStep: 'QUEUE_JOB_FAILED', otherRun: 'QUEUE_JOB_FAILED', otherChain: 'QUEUE_JOB_FAILED', staleEpoch: 'ABORTED' });
    // The forger's arguments are not used: element 1 gets the plan's (value 1, so 2 comes back).
    const args = await forge('forged-args', { element: { index: 1, args: { value: 1000, ms: 0 } } });
    expect(args.outcome).toMatchObject({ ok: true, output: { value: 2 } });

    // The run finishes with the plan's values; nothing ran for the refused jobs.
    const result = await victim.result();
    expect(result.status).toBe('succeeded');
    expect((result.outputs as { results: { value: number }[] }).results.map((r) => r.value)).toEqual([1, 2, 3, 4]);
    const keys = readEffects(log).map((e) => e.key);
    expect(keys.filter((k) => !k.startsWith('victim:each['))).toEqual([]);
    // Element 1 twice (the genuine job and the replayed one: a job can be replayed, not changed); every other once.
    expect(keys.sort()).toEqual(['victim:each[0]', 'victim:each[1]', 'victim:each[1]', 'victim:each[2]', 'victim:each[3]']);
    await cluster.engine.cancel('bystander');
  }, 60_000);

  it('a run id reused with another chain or input is refused with RUN_ID_CONFLICT on the queue too', async () => {
    await expect(cluster.engine.submit('spread', { n: 5, ms: 0 }, { runId: 'victim' })).rejects.toMatchObject({ code: 'RUN_ID_CONFLICT' });
    await expect(cluster.engine.submit('five', { start: 1 }, { runId: 'victim' })).rejects.toMatchObject({ code: 'RUN_ID_CONFLICT' });
    // The same request again is answered with the first run's result.
    const again = await cluster.engine.submit('spread', { n: 4, ms: 5000 }, { runId: 'victim' });
    expect((await again.result()).status).toBe('succeeded');
  }, 30_000);
});
