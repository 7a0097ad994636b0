import { ToolchainError } from '../common/errors.js';

// What a job carries (one job per run, job id = run id): the chain's name and the content hash
// the submitter saw, so that a worker with another definition refuses instead of running it
// (CHAIN_CHANGED). The input is not in the job: the run store has it, written before the job was
// added, and a job too big for Redis's memory is a problem the store does not have.

export type JobKind =
  /** A new run (or its redelivery): a finished run is left as it is. */
  | 'run'
  /** `resume`: a run cut short or failed is continued (redriven). */
  | 'resume'
  /** A waiting run whose wait is over: continued, unless another worker has already taken it. */
  | 'wake';

export interface RunJob {
  readonly v: 1;
  readonly kind: JobKind;
  readonly chain: string;
  readonly hash: string;
  /** With `resume --allow-changed`: the worker's definition may differ from the recorded one. */
  readonly allowChanged?: boolean;
  /** Its submitter listens: the worker sends the run's events as the job's progress (run-news.ts). */
  readonly events?: boolean;
}

export function encodeJob(job: Omit<RunJob, 'v'>): RunJob {
  return { v: 1, kind: job.kind, chain: job.chain, hash: job.hash, ...(job.allowChanged ? { allowChanged: true } : {}), ...(job.events ? { events: true } : {}) };
}

/** A job's data as this version reads it; anything else (a newer toolchain's job) is refused with what was expected. */
export function decodeJob(data: unknown, jobId: string): RunJob {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Partial<Record<keyof RunJob, unknown>>;
  if (d.v !== 1 || (d.kind !== 'run' && d.kind !== 'resume' && d.kind !== 'wake') || typeof d.chain !== 'string' || typeof d.hash !== 'string') {
    throw new ToolchainError('QUEUE_JOB_FAILED', `job ${jobId}: expected { v: 1, kind: 'run' | 'resume' | 'wake', chain, hash }, got ${JSON.stringify(data)?.slice(0, 200)}`);
  }
  return { v: 1, kind: d.kind, chain: d.chain, hash: d.hash, ...(d.allowChanged === true ? { allowChanged: true } : {}), ...(d.events === true ? { events: true } : {}) };
}

/** BullMQ refuses ids with ':' and all-digit ids (they clash with its own counters). */
export function checkRunId(runId: string): void {
  if (runId === '' || runId.includes(':') || /^\d+$/.test(runId)) {
    throw new ToolchainError('USAGE', `a queued run's id must be non-empty, without ':' and not only digits (BullMQ's rule for job ids), got '${runId}'`);
  }
}

/** Completed jobs kept for a short while only: the run store, not BullMQ, is the history. */
export const JOB_OPTIONS = {
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 24 * 3_600, count: 10_000 },
  // Failures inside the engine are results, not job failures: only a crash of the job's code
  // (the store unreachable, say) throws, and that is worth a few tries.
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
} as const;
