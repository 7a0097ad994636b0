import type { Clock } from '../common/clock.js';
import type { RunError, RunResult } from '../run-model/result.js';
import type { RunStore, StoredRun } from '../store/types.js';
import { ownerAlive } from './owner.js';

// Recovery without being asked: an engine that stays up (serve, watch, `recover: true`) looks, at
// start and then periodically, for runs on its store that are `running` but whose owner is gone,
// and resumes them as `resume` would — a claim with a new epoch (which fences the old owner),
// CHAIN_CHANGED when the chain's definition changed since. Only runs in no queue: a queue's runs
// are its workers' to take over (BullMQ's stalled jobs, the reconciler). A run that was asked to
// stop before its owner died ends `cancelled` instead of running again.

export type RecoveryEvent =
  | { readonly type: 'recovery:resumed'; readonly run_id: string; readonly chain: string }
  | { readonly type: 'recovery:finished'; readonly run_id: string; readonly chain: string; readonly status: RunResult['status']; readonly error?: RunResult['error'] }
  | { readonly type: 'recovery:refused'; readonly run_id: string; readonly chain: string; readonly code: RunError['code']; readonly message: string };

export interface RecoverySettings {
  readonly store: RunStore;
  readonly clock: Clock;
  readonly resume: (runId: string) => Promise<RunResult>;
  /** Ends a run whose owner died after a cancel was asked for. */
  readonly cancel: (run: StoredRun) => Promise<void>;
  readonly intervalMs: number;
  readonly onEvent: (event: RecoveryEvent) => void;
}

/** How many running runs one pass looks at (the newest). */
const PASS_LIMIT = 1_000;

/** Refusals that another pass would only repeat: the run waits for an operator. */
export const FOR_AN_OPERATOR: ReadonlySet<string> = new Set(['CHAIN_CHANGED', 'CHAIN_NOT_FOUND', 'INPUT_INVALID']);

export class Recovery {
  /** Being resumed here now. */
  private readonly resuming = new Set<string>();
  /** Refused for a reason a later pass would meet again. */
  private readonly left = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private passing: Promise<readonly string[]> | undefined;

  constructor(private readonly s: RecoverySettings) {}

  /** The first pass now, then one every interval. */
  start(): Promise<readonly string[]> {
    this.timer = setInterval(() => void this.pass(), this.s.intervalMs);
    this.timer.unref();
    return this.pass();
  }

  /** Resumes every interrupted run found (without waiting for them to end); their ids. */
  pass(): Promise<readonly string[]> {
    this.passing ??= this.look().finally(() => (this.passing = undefined));
    return this.passing;
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The chains here changed (added, reloaded): the runs refused for their chain are tried again on the next pass. */
  chainsChanged(): void {
    this.left.clear();
  }

  private async look(): Promise<readonly string[]> {
    let runs: readonly StoredRun[];
    try {
      runs = await this.s.store.listRuns({ status: 'running', limit: PASS_LIMIT });
    } catch {
      return []; // the store is away: the next pass tries again
    }
    const now = this.s.clock.now();
    const taken: string[] = [];
    for (const run of runs) {
      if (run.queue !== null || this.resuming.has(run.id) || this.left.has(run.id) || ownerAlive(run, now)) continue;
      taken.push(run.id);
      if (run.cancel_requested) {
        await this.s.cancel(run).catch(() => undefined);
        continue;
      }
      this.resuming.add(run.id);
      this.s.onEvent({ type: 'recovery:resumed', run_id: run.id, chain: run.chain });
      void this.s.resume(run.id).then((result) => {
        this.resuming.delete(run.id);
        const error = result.error;
        // Another process took it over at the same moment: it is theirs.
        if (error?.code === 'RUN_IN_PROGRESS') return;
        if (error !== undefined && FOR_AN_OPERATOR.has(error.code)) {
          this.left.add(run.id);
          this.s.onEvent({ type: 'recovery:refused', run_id: run.id, chain: run.chain, code: error.code, message: error.message });
        } else this.s.onEvent({ type: 'recovery:finished', run_id: run.id, chain: run.chain, status: result.status, ...(error !== undefined ? { error } : {}) });
      });
    }
    return taken;
  }
}
