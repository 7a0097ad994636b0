import type { ChainPlan } from '../compiler/plan.js';
import type { RunError } from '../executor/events.js';
import type { RunResult, StepSummary } from '../executor/types.js';
import type { RunStatus, StoredRun, StoredStep } from '../store/types.js';

// What the store knows of a run, in the shapes callers know: the RunResult of a finished run
// (returned again, executing nothing, to whoever starts it with its id), and the detail of
// `runs show --json` / `engine.runs.get`: SPEC §5's `--json` shape plus each step's output.

/** One step of a stored run: SPEC §5's summary plus its output and when it started. */
export interface StepDetail extends StepSummary {
  readonly output?: unknown;
  readonly started_at?: number;
  readonly fallback?: string;
}

export interface RunDetail {
  readonly run_id: string;
  readonly chain: string;
  readonly chain_hash: string;
  readonly status: RunStatus;
  readonly input: unknown;
  readonly outputs: unknown;
  readonly error?: RunError;
  /** Every recorded step result by key (`name`, `name[i]`, `parent›name`), then the plan's steps that never ran as `pending`. */
  readonly steps: Readonly<Record<string, StepDetail>>;
  readonly created_at: number;
  readonly finished_at: number | null;
  readonly duration_ms: number;
  /** Who runs it now, while it runs. */
  readonly owner: string | null;
}

/** A row of `runs list`. */
export interface RunSummary {
  readonly run_id: string;
  readonly chain: string;
  readonly status: RunStatus;
  readonly created_at: number;
  readonly finished_at: number | null;
  readonly duration_ms: number;
  readonly error?: RunError;
}

export function runSummary(run: StoredRun, now: number): RunSummary {
  return {
    run_id: run.id,
    chain: run.chain,
    status: run.status,
    created_at: run.created_at,
    finished_at: run.finished_at,
    duration_ms: (run.finished_at ?? now) - run.created_at,
    ...(run.error ? { error: run.error } : {}),
  };
}

export function runDetail(run: StoredRun, steps: readonly StoredStep[], plan: ChainPlan | undefined, now: number): RunDetail {
  const out: Record<string, StepDetail> = {};
  for (const s of steps) {
    out[s.key] = {
      status: s.status,
      attempts: s.attempts,
      duration_ms: s.duration_ms,
      started_at: s.started_at,
      ...(s.error ? { error: s.error } : {}),
      ...(s.output !== undefined ? { output: s.output } : {}),
      ...(s.fallback ? { fallback: s.fallback } : {}),
    };
  }
  for (const step of plan?.hash === run.chain_hash ? plan.steps : []) out[step.name] ??= { status: 'pending', attempts: 0, duration_ms: 0 };
  return {
    ...runSummary(run, now),
    chain_hash: run.chain_hash,
    input: run.input,
    outputs: run.outputs,
    steps: out,
    owner: run.owner,
  };
}

/** The RunResult of a finished run, as its first execution returned it. */
export function storedResult(run: StoredRun, steps: readonly StoredStep[]): RunResult {
  const summaries: Record<string, StepSummary> = {};
  for (const s of steps) {
    if (s.key.includes('›') || s.key.includes('[')) continue;
    summaries[s.key] = { status: s.status, attempts: s.attempts, duration_ms: s.duration_ms, error: s.error };
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

/** How a run ended, as the store says it. */
export function endStatus(result: RunResult): Exclude<RunStatus, 'running'> {
  return result.status;
}
