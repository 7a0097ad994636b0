import type { Queue } from 'bullmq';
import type { Clock } from '../common/clock.js';
import { ownerAlive } from '../runs/owner.js';
import type { RunStore } from '../store/types.js';
import { QUEUED_OWNER } from './submit.js';

// A worker killed with SIGKILL leaves its jobs active in BullMQ, locked in its name until the lock
// runs out and the stalled check (two passes of --stalled-interval, 30 s by default) moves them
// back. The run store knows sooner: the run's owner names the dead process (on this machine its
// process id is gone at once) or its lease ran out. This pass, at a worker's start and every
// second, puts the job of such a run back in the waiting list, where a live worker takes it and
// resumes the run from its recorded steps; the claim's new epoch fences the old owner, should it
// be alive after all.
//
// Only a job its run's dead owner took is moved: one a worker took after the owner's last word
// (its claim or lease renewal, the run's updated_at) is with a worker that has not claimed the run
// yet, and a run still owned by the submitter (`queued`) says nothing of who holds its job. Those
// are left to BullMQ's stalled check.

/** How many running runs one pass looks at (the newest). */
const PASS_LIMIT = 1_000;

/** The ids of the runs whose jobs went back to the waiting list. */
export async function takeOverDeadWorkers(queue: Queue, store: RunStore, clock: Clock): Promise<string[]> {
  const moved: string[] = [];
  const now = clock.now();
  for (const run of await store.listRuns({ status: 'running', queue: queue.name, limit: PASS_LIMIT })) {
    if (run.owner === null || run.owner === QUEUED_OWNER || ownerAlive(run, now)) continue;
    const job = await queue.getJob(run.id);
    if (job === undefined || job.name !== 'run' || (job.processedOn ?? Infinity) > run.updated_at) continue;
    if ((await job.getState()) !== 'active') continue;
    // Without the dead worker's lock token: BullMQ then moves the job whoever holds it.
    await job.moveToWait();
    moved.push(run.id);
  }
  return moved;
}
