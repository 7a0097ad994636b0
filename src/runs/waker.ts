import type { Clock } from '../common/clock.js';
import type { RunResult } from '../run-model/result.js';
import type { RunStore, StoredRun } from '../store/types.js';
import { FOR_AN_OPERATOR } from './recovery.js';
import type { RunStartOptions } from './start-options.js';
import { storedResult } from './stored-result.js';

// Waking parked runs. A run with nothing left but waits is a record in the store; the process
// that wakes it claims it (compare-and-set on its epoch, so one process of any number wins) and
// resumes it from its recorded steps. Two scopes:
// - `all` (serve, worker, watch, `timers: true`): every run on the store whose time has come, at
//   start (timers that came due while nothing ran fire then) and on every tick;
// - `followed`: only the runs a caller in this process awaits (`engine.run` of a chain that
//   waited): it also notices when another process finished one of them.
// A run parked here, or an event or decision sent from here, brings the next look forward, so a
// short sleep does not wait for the tick.

export interface WakerSettings {
  readonly store: RunStore;
  readonly clock: Clock;
  readonly scope: 'all' | 'followed';
  readonly intervalMs: number;
  /** Claims and continues a waiting run (refused with RUN_IN_PROGRESS when another process took it first). */
  readonly wake: (run: StoredRun, followed: FollowOptions | undefined) => Promise<RunResult>;
  readonly onError?: (error: unknown) => void;
}

/** What a caller awaiting a run asked for it: its events keep going to its listener when the run is woken here. */
export type FollowOptions = RunStartOptions;

/** Most runs one look wakes. */
const BATCH = 256;

/** A run refused for a reason a wake would only repeat for now (recovery's: the chain is not here, or changed) is left alone this long. */
const LEAVE_MS = 60_000;

interface Follower {
  readonly options: FollowOptions;
  readonly resolve: (result: RunResult) => void;
}

export class Waker {
  private readonly followers = new Map<string, Follower[]>();
  /** Being woken here now. */
  private readonly waking = new Set<string>();
  /** Refused for a reason a wake would meet again: until when they are left to others (or an operator). */
  private readonly left = new Map<string, number>();
  private tick: ReturnType<typeof setInterval> | undefined;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private soonAt = Infinity;
  private looking: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly s: WakerSettings) {}

  /** `all`: the first look now, then one every interval. */
  start(): Promise<void> {
    this.keepTicking();
    return this.look();
  }

  /** Resolves with the run's result once it has finished, wherever it runs on; `options` are used when it is woken here. */
  follow(runId: string, options: FollowOptions): Promise<RunResult> {
    const promise = new Promise<RunResult>((resolve) => {
      let list = this.followers.get(runId);
      if (list === undefined) this.followers.set(runId, (list = []));
      list.push({ options, resolve });
    });
    this.keepTicking();
    return promise;
  }

  /** A run finished in this process: its followers have their result. */
  finished(result: RunResult): void {
    const list = this.followers.get(result.run_id);
    if (list === undefined) return;
    this.followers.delete(result.run_id);
    for (const f of list) f.resolve(result);
    this.keepTicking();
  }

  /** A run was parked here until `wakeAt` (null: until a wait of it is resolved): look then. */
  parked(wakeAt: number | null): void {
    if (wakeAt !== null) this.lookAt(wakeAt);
  }

  /** An event or a decision was sent from here: look now. */
  poke(): void {
    this.lookAt(this.s.clock.now());
  }

  /**
   * The chains here changed (added, reloaded): a run left alone because its chain was missing or
   * different may be wakeable now, so nothing stays left and the next look is now.
   */
  chainsChanged(): void {
    this.left.clear();
    this.poke();
  }

  close(): void {
    this.closed = true;
    if (this.tick !== undefined) clearInterval(this.tick);
    if (this.soon !== undefined) clearTimeout(this.soon);
    this.tick = this.soon = undefined;
  }

  private lookAt(at: number): void {
    if (this.closed || at >= this.soonAt) return;
    if (this.soon !== undefined) clearTimeout(this.soon);
    this.soonAt = at;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.soonAt = Infinity;
      void this.look();
    }, Math.max(0, at - this.s.clock.now()));
    if (!this.holdsProcess()) this.soon.unref();
  }

  /**
   * A process that wakes every run stays up for its own reasons (a server, a worker): its timers
   * do not hold it. Someone here awaiting a run does: the process stays up until the run ends.
   */
  private holdsProcess(): boolean {
    return this.followers.size > 0;
  }

  private keepTicking(): void {
    if (this.closed) return;
    const needed = this.s.scope === 'all' || this.followers.size > 0;
    if (needed && this.tick === undefined) this.tick = setInterval(() => void this.look(), this.s.intervalMs);
    else if (!needed && this.tick !== undefined) {
      clearInterval(this.tick);
      this.tick = undefined;
    }
    if (this.holdsProcess()) {
      this.tick?.ref();
      this.soon?.ref();
    } else {
      this.tick?.unref();
      this.soon?.unref();
    }
  }

  /** One look at a time; a look asked for during one runs right after it. */
  private look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return this.looking;
    }
    this.looking = this.lookOnce()
      .catch((error: unknown) => this.s.onError?.(error))
      .finally(() => {
        this.looking = undefined;
        if (this.again && !this.closed) {
          this.again = false;
          void this.look();
        }
      });
    return this.looking;
  }

  private async lookOnce(): Promise<void> {
    const { store, clock } = this.s;
    const now = clock.now();
    if (this.s.scope === 'all') {
      const due = await store.waits.dueRuns(now, BATCH);
      let started = 0;
      for (const run of due) if (this.wake(run)) started++;
      // A full batch with new runs in it: more may be due; look again as soon as this one is under way.
      if (due.length === BATCH && started > 0) this.again = true;
    }
    for (const runId of [...this.followers.keys()]) {
      if (this.waking.has(runId)) continue;
      const run = await store.getRun(runId);
      if (run === undefined) continue;
      if (run.status === 'waiting') {
        const at = await store.waits.wakeAt(runId);
        if (at !== null && at !== undefined && at <= now) this.wake(run);
      } else if (run.status !== 'running') this.finished(storedResult(run, await store.getSteps(runId)));
    }
  }

  /** Starts waking `run`; false when it is being woken here already. */
  private wake(run: StoredRun): boolean {
    if (this.waking.has(run.id) || this.closed) return false;
    const leftUntil = this.left.get(run.id);
    if (leftUntil !== undefined && leftUntil > this.s.clock.now()) return false;
    this.left.delete(run.id);
    this.waking.add(run.id);
    const followed = this.followers.get(run.id)?.[0]?.options;
    this.s.wake(run, followed).then(
      (result) => {
        this.waking.delete(run.id);
        const code = result.error?.code;
        if (code !== undefined && FOR_AN_OPERATOR.has(code)) {
          this.left.set(run.id, this.s.clock.now() + LEAVE_MS);
          return;
        }
        if (result.status !== 'waiting' && code !== 'RUN_IN_PROGRESS') this.finished(result);
      },
      (error: unknown) => {
        this.waking.delete(run.id);
        this.s.onError?.(error);
      },
    );
    return true;
  }
}

/** What `wake` answers for a run it leaves waiting: handed to a queue, or to a process that has its chain (CHAIN_NOT_FOUND: left alone a while). */
export function leftWaiting(run: StoredRun, code: 'RUN_WAITING' | 'CHAIN_NOT_FOUND', message: string): RunResult {
  return { run_id: run.id, chain: run.chain, status: 'waiting', outputs: null, error: { code, message }, steps: {}, duration_ms: 0 };
}
