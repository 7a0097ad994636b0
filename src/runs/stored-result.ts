import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import type { RunError, RunResult, StepSummary } from '../run-model/result.js';
import { STEPS_ENDED } from '../executor/run-chain.js';
import { phaseOf } from '../compiler/handler-phase.js';
import type { EarlierResult, RunStatus, StoredRun, StoredStep } from '../store/types.js';
import { allAttempts, resumeTimes } from './attempt-history.js';
import { isInterrupted } from './owner.js';

// What the store knows of a run, in the shapes callers know: the RunResult of a finished run
// (returned again, executing nothing, to whoever starts it with its id), and the detail of
// `runs show --json` / `engine.runs.get`: the CLI's `--json` shape plus each step's output.

/** One step of a stored run: the CLI's summary plus its output and when it started. */
export interface StepDetail extends Omit<StepSummary, 'status'> {
  /**
   * `running`: not recorded yet, though every step it waits for is (it is at work, or waits for a
   * slot); `interrupted`: the same in a run whose owner is gone.
   */
  readonly status: StepSummary['status'] | 'running' | 'interrupted';
  readonly output?: unknown;
  readonly started_at?: number;
  readonly fallback?: string;
  /** What the step did in earlier executions of the run (it ran again after a resume), oldest first; `attempts` counts them too. */
  readonly earlier?: readonly EarlierResult[];
  /** A re-run did not run the step: its result is this run's (the one it re-runs), kept. */
  readonly kept_from?: string;
}

export interface RunDetail extends RunSummary {
  readonly chain_hash: string;
  readonly input: unknown;
  readonly outputs: unknown;
  /** Every recorded step result by key (`name`, `name[i]`, `parent›name`, a repeat's rounds `name#N`), then the plan's steps that have none (`pending`, or `running` / `interrupted` when all they wait for is recorded). */
  readonly steps: Readonly<Record<string, StepDetail>>;
  /** Who runs it now, while it runs. */
  readonly owner: string | null;
  /** When the run was resumed (oldest first); empty for a run that never was. */
  readonly resumes: readonly number[];
  /** A re-run: the run it re-runs, and the step it started from (absent: it ran every step again). */
  readonly rerun_of?: string;
  readonly rerun_from?: string;
  /** The re-runs of this run, newest first. */
  readonly reruns: readonly string[];
}

/** A row of `runs list`. */
export interface RunSummary {
  readonly run_id: string;
  readonly chain: string;
  readonly status: RunStatus;
  /** When the run was first started (a resumed run keeps it). Epoch milliseconds, like every time here. */
  readonly started_at: number;
  readonly finished_at: number | null;
  /** Until it finished, or until now while it runs; for an interrupted run, until the last sign of its owner. */
  readonly duration_ms: number;
  /** Status `running`, but its owner is gone: nothing finishes it until it is resumed (`toolchain resume RUN_ID`). */
  readonly interrupted: boolean;
  readonly error?: RunError;
}

export function runSummary(run: StoredRun, now: number, steps?: readonly StoredStep[]): RunSummary {
  const interrupted = isInterrupted(run, now);
  const end = run.finished_at ?? (interrupted ? lastSignOfLife(run, steps) : now);
  return {
    run_id: run.id,
    chain: run.chain,
    status: run.status,
    started_at: run.created_at,
    finished_at: run.finished_at,
    duration_ms: Math.max(0, end - run.created_at),
    interrupted,
    ...(run.error ? { error: run.error } : {}),
  };
}

/** An interrupted run's owner was last heard of when it renewed its lease or recorded a step. */
function lastSignOfLife(run: StoredRun, steps: readonly StoredStep[] | undefined): number {
  let last = run.updated_at;
  for (const s of steps ?? []) last = Math.max(last, s.started_at + s.duration_ms);
  return last;
}

export function runDetail(run: StoredRun, steps: readonly StoredStep[], plan: ChainPlan | undefined, now: number, reruns: readonly string[] = []): RunDetail {
  const summary = runSummary(run, now, steps);
  const out: Record<string, StepDetail> = {};
  for (const s of steps) {
    if (isStepsEnded(s.key)) continue;
    const phase = phaseOf(plan, s.key);
    out[s.key] = {
      ...(phase !== undefined ? { phase } : {}),
      status: s.status,
      attempts: allAttempts(s),
      duration_ms: s.duration_ms,
      started_at: s.started_at,
      ...(s.error ? { error: s.error } : {}),
      ...(s.output !== undefined ? { output: s.output } : {}),
      ...(s.fallback ? { fallback: s.fallback } : {}),
      ...(s.earlier?.length ? { earlier: s.earlier } : {}),
      ...(s.kept_from !== undefined ? { kept_from: s.kept_from } : {}),
    };
  }
  const planned = plan?.hash === run.chain_hash ? plan.steps : [];
  for (const step of planned) {
    if (out[step.name] !== undefined) continue;
    out[step.name] = run.status === 'running' ? unrecorded(step, planned, out, steps, summary) : { status: 'pending', attempts: 0, duration_ms: 0 };
  }
  const origin = { ...(run.rerun_of !== null ? { rerun_of: run.rerun_of } : {}), ...(run.rerun_from !== null ? { rerun_from: run.rerun_from } : {}) };
  return { ...summary, chain_hash: run.chain_hash, input: run.input, outputs: run.outputs, steps: out, owner: run.owner, resumes: resumeTimes(steps), ...origin, reruns };
}

/**
 * A step of a running run with no result recorded. If every step it waits for has one, it was
 * ready: at work now (or waiting for a slot), or at work when the owner died. It started when the
 * last of those ended, or when its first element or sub-chain step did.
 */
function unrecorded(step: PlanStep, planned: readonly PlanStep[], out: Record<string, StepDetail>, steps: readonly StoredStep[], run: RunSummary): StepDetail {
  let started = run.started_at;
  for (const i of step.waitsFor) {
    const dep = out[planned[i]!.name];
    if (dep === undefined || dep.status === 'pending' || dep.status === 'running' || dep.status === 'interrupted') return { status: 'pending', attempts: 0, duration_ms: 0 };
    started = Math.max(started, (dep.started_at ?? run.started_at) + dep.duration_ms);
  }
  for (const s of steps) if (s.key.startsWith(`${step.name}[`) || s.key.startsWith(`${step.name}›`) || s.key.startsWith(`${step.name}#`)) started = Math.min(started, s.started_at);
  return { status: run.interrupted ? 'interrupted' : 'running', attempts: 1, duration_ms: Math.max(0, run.started_at + run.duration_ms - started), started_at: started };
}

/** The RunResult of a finished run, as its first execution returned it (`plan`: its chain's, for the phases of handler steps). */
export function storedResult(run: StoredRun, steps: readonly StoredStep[], plan?: ChainPlan): RunResult {
  const summaries: Record<string, StepSummary> = {};
  for (const s of steps) {
    // Parts of a step (a sub-chain's steps, for_each elements, repeat rounds) are not steps of the run.
    if (stepOf(s.key) !== s.key || isStepsEnded(s.key)) continue;
    const phase = phaseOf(plan, s.key);
    summaries[s.key] = { status: s.status, attempts: s.attempts, duration_ms: s.duration_ms, error: s.error, ...(phase !== undefined ? { phase } : {}) };
  }
  return {
    run_id: run.id,
    chain: run.chain,
    status: run.status === 'running' ? 'failed' : run.status,
    outputs: run.status === 'succeeded' ? run.outputs : null,
    error: run.error ?? undefined,
    steps: summaries,
    duration_ms: (run.finished_at ?? run.updated_at) - run.created_at,
  };
}

/** The step of the run a result key belongs to: `a` for `a`, `a[2]` (an element), `a›b` (a sub-chain's step) and `a#3` (a round). */
export function stepOf(key: string): string {
  const end = key.search(/[[›#]/);
  return end < 0 ? key : key.slice(0, end);
}

/** The record that a run's steps had ended before its failure handling ran (run-chain.ts): bookkeeping, not a step. */
export function isStepsEnded(key: string): boolean {
  return key === STEPS_ENDED || key.endsWith(`›${STEPS_ENDED}`);
}

/** How a run ended, as the store says it (a parked run has not ended: see DurableRuns). */
export function endStatus(result: RunResult): Exclude<RunStatus, 'running' | 'waiting'> {
  return result.status === 'waiting' ? 'failed' : result.status;
}
