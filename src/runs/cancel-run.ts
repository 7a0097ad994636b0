import type { RunStore, StoredRun } from '../store/types.js';
import { newOwnerId } from './owner.js';

// Cancelling a run through the store: a running one is asked to stop (its owner stops it within a
// second, wherever it runs); a waiting one has no owner to ask, so it is claimed — compare-and-set
// on its epoch, which also keeps a waker from continuing it — and ended `cancelled` at once.

/** The run as it was when asked (undefined: no such run). */
export async function cancelRun(store: RunStore, id: string, now: number, owner = newOwnerId()): Promise<StoredRun | undefined> {
  const run = await store.getRun(id);
  if (run?.status !== 'waiting') return store.requestCancel(id, now);
  await endCancelled(store, run, now, owner);
  return run;
}

/** Ends as cancelled a run with no owner at work on it (waiting, or its owner died after a cancel was asked). */
export async function endCancelled(store: RunStore, run: StoredRun, now: number, owner: string): Promise<boolean> {
  const claim = await store.claimRun(run.id, { owner, lease_until: now + 30_000, now, expected_epoch: run.epoch });
  if (!claim.claimed) return false;
  return (await store.finishRun(run.id, claim.run.epoch, { status: 'cancelled', outputs: null, error: { code: 'ABORTED', message: `run ${run.id} was cancelled` }, finished_at: now })) === 'ok';
}
