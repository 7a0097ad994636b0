// RunPlace: where an engine's runs execute — here, in this process (local-runs.ts), or on a
// queue's workers (queued-runs.ts). createEngine picks one once, and every way a run starts,
// continues or stops goes through it, so the engine's methods never ask which it is.

import type { ChainPlan } from '../compiler/plan.js';
import type { RunResult } from '../run-model/result.js';
import type { Submission } from '../queue/submit.js';
import type { RerunOptions } from '../runs/rerun.js';
import type { InternalStartOptions, RunStartOptions } from '../runs/start-options.js';
import type { FireOutcome } from '../triggers/scheduler.js';

export interface RunPlace {
  /** `Engine.run` once its options are checked and the chain is named by a string. */
  run(name: string, input: unknown, options: RunStartOptions): Promise<RunResult>;
  /** `Engine.submit`: the run's id once it is recorded (and enqueued), its result when wanted. */
  submit(name: string, input: unknown, options: RunStartOptions): Promise<Submission>;
  /** `Engine.resume`; the engine's own parts (the queue worker) attach their plumbing. */
  resume(runId: string, options: InternalStartOptions): Promise<RunResult>;
  /** `Engine.rerun`. */
  rerun(runId: string, options: RerunOptions): Promise<RunResult>;
  /** `Engine.cancel`: true when the run was running (or, here, waiting). */
  cancel(runId: string): Promise<boolean>;
  /** A trigger's tick or event: the run under its derived id; 'fired' once it is recorded and started. */
  fire(plan: ChainPlan, input: unknown, runId: string): Promise<FireOutcome>;
}
