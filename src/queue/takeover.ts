import type { Queue } from 'bullmq';
import type { Redis as RedisClient } from 'ioredis';
import type { Clock } from '../common/clock.js';
import { ownerAlive, QUEUED_OWNER } from '../runs/owner.js';
import type { RunStore } from '../store/types.js';

// A worker killed with SIGKILL leaves its jobs active in BullMQ, locked in its name until the lock
// runs out and the stalled check (two passes of --stalled-interval, 30 s by default) moves them
// back. The run store knows sooner: the run's owner names the dead process (on this machine its
// process id is gone at once) or its lease ran out. This pass, at a worker's start and every
// second, puts the job of such a run back in the waiting list, where a live worker takes it and
// resumes the run from its recorded steps; the claim's new epoch fences the old owner, should it
// be alive after all.
//
// Only a job its run's dead owner took is moved, and only while that owner's lock is on it: the
// move checks the lock's token, so a job that changed hands meanwhile stays where it is. A job a
// worker took after the owner's last word (its claim or lease renewal: the run's updated_at) is
// with a worker that has not claimed the run yet, and a run still owned by the submitter
// (`queued`) says nothing of who holds its job: those are left to BullMQ's stalled check.

/** How many running runs one pass looks at (the newest). */
const PASS_LIMIT = 1_000;

/** The ids of the runs whose jobs went back to the waiting list (`redis`: the queue's connection, to read a job's lock). */
export async function takeOverDeadWorkers(queue: Queue, redis: RedisClient, store: RunStore, clock: Clock): Promise<string[]> {
  const moved: string[] = [];
  const now = clock.now();
  for (const run of await store.listRuns({ status: 'running', queue: queue.name, limit: PASS_LIMIT })) {
    if (run.owner === null || run.owner === QUEUED_OWNER || ownerAlive(run, now)) continue;
    // The lock's token first, then the job: a job taken again after this read shows it in its
    // processedOn. No lock: it ran out, and BullMQ's stalled check moves the job anyway.
    const token = await redis.get(`${queue.toKey(run.id)}:lock`);
    if (token === null) continue;
    const job = await queue.getJob(run.id);
    if (job === undefined || job.name !== 'run' || (job.processedOn ?? Infinity) > run.updated_at) continue;
    try {
      await job.moveToWait(token);
    } catch {
      continue; // the lock is another's now
    }
    moved.push(run.id);
  }
  return moved;
}
