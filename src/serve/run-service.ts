import type { RunEvent, WaitSummary } from '../run-model/events.js';
import type { RunError, RunResult, HandlerPhase } from '../run-model/result.js';
import type { RerunRequest } from '../runs/rerun.js';

// The narrow contract between `toolchain serve`'s routes and wherever runs live. The routes know
// nothing else: the in-memory service (memory-run-service.ts) keeps the runs this server started;
// a store-backed one reads and writes the run store, and may submit to a queue.
// Every method rejects with a ServiceError for what the caller got wrong (unknown run, bad input,
// a run that cannot be cancelled), which the routes turn into `{ error: { code, message } }`.

export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'compensation_failed' | 'cancelled';

export interface StartOptions {
  /** The caller's run id: its idempotency key. */
  readonly runId?: string;
  /** Resolve when the run has finished, with its result. */
  readonly wait: boolean;
}

export type StartOutcome =
  | { readonly run_id: string; readonly result?: undefined }
  | { readonly run_id: string; readonly result: RunResult };

export interface ListQuery {
  readonly status?: RunStatus;
  readonly chain?: string;
  /** At most this many, newest first. */
  readonly limit: number;
  /** Told about each stored run that cannot be read back (STORE_CORRUPT), which the list leaves out; without it such a run fails the list. */
  readonly onCorrupt?: (error: { readonly code: string; readonly message: string }) => void;
}

/** A row of `runs list`. */
export interface RunSummary {
  readonly run_id: string;
  readonly chain: string;
  readonly status: RunStatus;
  /** Epoch milliseconds. */
  readonly started_at: number;
  readonly finished_at?: number;
  /** Set once finished, and for an interrupted run (until the last sign of its owner). */
  readonly duration_ms?: number;
  /** Status `running`, but its owner is gone: nothing finishes it until it is resumed. */
  readonly interrupted: boolean;
  readonly error?: RunError;
  /** Status `waiting`: what it waits for, and when it is looked at again (null: when a wait of it is over). */
  readonly waiting_for?: readonly WaitSummary[];
  readonly wake_at?: number | null;
}

/** One attempt of a step on the timeline: attempt n+1 starts `delay_ms` after attempt n failed. */
export interface AttemptRecord {
  readonly attempt: number;
  readonly started_at: number;
  /** Set once the attempt ended. */
  readonly duration_ms?: number;
  readonly status: 'running' | 'waiting' | 'succeeded' | 'failed';
  readonly error?: { readonly code: string; readonly message: string };
  /** What ran: the step's own call, or its fallback. */
  readonly fallback?: 'input' | 'tool' | 'output';
  /** For a `for_each` element's retry: the element. */
  readonly item?: number;
}

/** A step of `runs show --json`: the CLI's summary plus output, error, input and every attempt. */
export interface StepDetail {
  /** `interrupted`: at work when the run's owner died; `waiting`: its wait (a sleep, an event, a decision) is not over. */
  readonly status: 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'interrupted';
  readonly attempts: number;
  readonly duration_ms: number;
  readonly started_at?: number;
  readonly output?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  /** The step's arguments as its input_map resolves against the run's context (absent when unknown). */
  readonly input?: unknown;
  readonly skip_reason?: 'when' | 'dependency';
  /** Set on a step of failure handling: `on_failure`, `finally`, or `compensate` (a compensation, `STEP~compensate`). */
  readonly phase?: HandlerPhase;
  readonly timeline: readonly AttemptRecord[];
  /** Set instead of `input` / `output` when the answer left the value out for its size. */
  readonly input_truncated?: Truncated;
  readonly output_truncated?: Truncated;
  /** A re-run kept the step's result from the run it re-runs (this id) instead of running it. */
  readonly kept_from?: string;
}

/** A value an answer left out for its size (bounded-values.ts): its JSON size and the route that answers it whole. */
export interface Truncated {
  readonly bytes: number;
  readonly href: string;
}

/** `runs show --json` / `GET /api/runs/ID`. Steps of sub-chains are keyed `step›substep`. */
export interface RunDetail extends RunSummary {
  readonly input: unknown;
  readonly outputs: unknown;
  readonly steps: Readonly<Record<string, StepDetail>>;
  /** When the run was resumed (epoch milliseconds, oldest first); empty for a run that never was. */
  readonly resumes: readonly number[];
  /** A re-run: the run it re-runs, and the step it started from (absent: every step ran again). */
  readonly rerun_of?: string;
  readonly rerun_from?: string;
  /** This run's re-runs, newest first (absent when unknown). */
  readonly reruns?: readonly string[];
  /** Set instead of `input` / `outputs` when the answer left the value out for its size. */
  readonly input_truncated?: Truncated;
  readonly outputs_truncated?: Truncated;
}

export interface RunService {
  /** Starts a run. Rejects with 400 CHAIN_NOT_FOUND / INPUT_INVALID for what can never run, 409 RUN_IN_PROGRESS for a run id in use. */
  start(chain: string, input: unknown, options: StartOptions): Promise<StartOutcome>;
  list(query: ListQuery): Promise<RunSummary[]>;
  /** Undefined for an unknown run. */
  get(runId: string): Promise<RunDetail | undefined>;
  /**
   * The run's events: every past one, then live ones as they happen, ending after the run's
   * `run:finished` (sub-chains' events included, marked with `parent`). Undefined for an unknown run.
   * Breaking out of the loop unsubscribes.
   */
  events(runId: string): Promise<AsyncIterable<RunEvent> | undefined>;
  /** Stops a running run (status `cancelled`). 404 RUN_NOT_FOUND, 409 RUN_FINISHED. */
  cancel(runId: string): Promise<RunSummary>;
  /** Continues a cut-short or failed run from its recorded steps. */
  resume(runId: string): Promise<StartOutcome>;
  /** A new run of a run that ended, from a step on (`engine.rerun`); its id. 404 RUN_NOT_FOUND; 400/409 for what the engine refuses. */
  rerun(runId: string, request: RerunRequest): Promise<StartOutcome>;
  /** Stops taking runs; waits up to `graceMs` for runs in flight, then cancels the rest. */
  close(graceMs?: number): Promise<void>;
}

/** What a caller got wrong, with the HTTP status it maps to. */
export class ServiceError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 429 | 503,
    readonly code: string,
    message: string,
    /** For a 429 or 503: the seconds to wait before trying again (the Retry-After header). */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}
