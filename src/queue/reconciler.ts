import type { Queue } from 'bullmq';
import type { Clock } from '../common/clock.js';
import { ownerAlive } from '../runs/owner.js';
import type { RunStore } from '../store/types.js';
import { encodeJob, JOB_OPTIONS } from './job-codec.js';

// The store outlives Redis (PostgreSQL, SQLite): after Redis was flushed or restarted without
// persistence, runs the store still calls `running` have no job any more, and nobody would ever
// execute them. The reconciler, at worker start and on a timer, enqueues each again — only a run
// whose owner is gone (a run a live process executes is left to it) and whose job is missing or
// ended (a job id can be reused only once its job is removed). A run belongs to one queue (the
// store records which: the submitter's, then that of the worker that last claimed it), and a
// reconciler looks only at its own queue's runs — another queue's job is not in its Redis keys,
// and a run in no queue is its process's to resume.

/** How many running runs one pass looks at (the newest). */
const PASS_LIMIT = 1_000;

export async function reconcile(queue: Queue, store: RunStore, clock: Clock): Promise<string[]> {
  const enqueued: string[] = [];
  const now = clock.now();
  for (const run of await store.listRuns({ status: 'running', queue: queue.name, limit: PASS_LIMIT })) {
    if (ownerAlive(run, now)) continue;
    const job = await queue.getJob(run.id);
    if (job !== undefined) {
      const state = await job.getState();
      // A failed job (it crashed every try) waits for an operator's resume rather than crashing again.
      if (state !== 'completed' && state !== 'unknown') continue;
      await job.remove().catch(() => undefined);
    }
    await queue.add('run', encodeJob({ kind: 'run', chain: run.chain, hash: run.chain_hash }), { ...JOB_OPTIONS, jobId: run.id });
    enqueued.push(run.id);
  }
  return enqueued;
}
