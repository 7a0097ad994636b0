import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { StoredRun } from '../store/types.js';

// Who executes a run: `host:pid:nonce`, one per engine. A run marked `running` whose owner died is
// resumable and shown as interrupted: its lease ran out, or — faster, for a process
// killed on this machine — the process id it names no longer runs here. A process that was
// killed but not yet reaped by its parent (a zombie) still has its id, and signal 0 still
// reaches it: on Linux its state in /proc says it is dead.

/**
 * The owner of a run recorded for a queue's workers that none has taken up yet (the submitter's
 * placeholder): the worker that takes it executes it for the first time, not again.
 */
export const QUEUED_OWNER = 'queued';

export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** True while the owner of a running run may still be at work on it. */
export function ownerAlive(run: StoredRun, now: number): boolean {
  if (run.owner === null) return false;
  if (run.lease_until !== null && run.lease_until < now) return false;
  const pid = localPid(run.owner);
  return pid === undefined || processRuns(pid);
}

/** A run the store says is running whose owner is gone: nothing will finish it until it is resumed. */
export function isInterrupted(run: StoredRun, now: number): boolean {
  return run.status === 'running' && !ownerAlive(run, now);
}

/** The process id an owner names, when that owner is on this machine. */
function localPid(owner: string): number | undefined {
  const parts = owner.split(':');
  const pid = Number(parts.at(-2));
  return parts.slice(0, -2).join(':') === hostname() && Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, and belongs to someone else.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  return !deadInProc(pid);
}

/** Linux: the process exists only as a zombie (killed, not yet reaped) or is being torn down. Elsewhere: never known, false. */
function deadInProc(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return false;
  }
  // `pid (comm) S …`: the command may itself contain ')' and spaces; the state follows the last one.
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X' || state === 'x';
}
