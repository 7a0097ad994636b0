import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { StoredRun } from '../store/types.js';

// Who executes a run: `host:pid:nonce`, one per engine. A run marked `running` whose owner died is
// resumable (SPEC §7.2): its lease ran out, or — faster, for a process killed on this machine —
// the process id it names no longer exists here.

export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** True while the owner of a running run may still be at work on it. */
export function ownerAlive(run: StoredRun, now: number): boolean {
  if (run.owner === null) return false;
  if (run.lease_until !== null && run.lease_until < now) return false;
  const parts = run.owner.split(':');
  const pid = Number(parts.at(-2));
  if (parts.slice(0, -2).join(':') === hostname() && Number.isInteger(pid) && pid > 0) return processExists(pid);
  return true;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, and belongs to someone else.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
