import { didYouMean, suggestionSuffix, ToolchainError, type ErrorCode } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { THIS } from '../compiler/compile-repeat.js';
import { jsonEqual } from '../expr/json-equal.js';
import type { PathRef } from '../expr/types.js';
import type { CreateOutcome, RunStore, StoredRun, StoredStep } from '../store/types.js';
import { fenced } from './group-recorder.js';
import { rerunIdTaken } from './run-id-conflict.js';
import type { RunStartOptions } from './start-options.js';
import { stepOf } from './stored-result.js';

// A re-run: a new run (a new id) of a run's chain, from one of its steps. The step and every
// step that waits for it, directly or through others, by the DAG (references, depends_on and
// order), run; every other step keeps the output the origin recorded for it — restored, not
// executed, as a resume restores — because nothing it read has changed. Without a step, every
// step runs again. The input is the origin's with the given keys replaced.
//
// A replaced input that a kept step read would leave that step's output stale: the re-run is
// refused (RERUN_INPUT_READ, naming the step), so that what ran and what was kept always agree;
// re-running from that step (or one before it) runs it with the new value. This is Step
// Functions' redrive (recorded results kept) with LangGraph's time travel (a new branch from a
// checkpoint, with an edited state), and the new run names where it came from.

/** What a caller asks of a re-run. */
export interface RerunRequest {
  /** The step to run again, with everything downstream of it; absent: every step. */
  readonly from?: string;
  /** Inputs over the origin's, key by key. */
  readonly input?: Readonly<Record<string, unknown>>;
  /** Run it even though the chain's file changed since the origin ran. */
  readonly allowChanged?: boolean;
}

/** `engine.rerun(runId, options)`: the request and the new run's options (`runId`: its id). */
export interface RerunOptions extends RunStartOptions, RerunRequest {}

/** What a re-run starts from: the plan, its input, the origin's results it keeps, and where it came from. */
export interface Rerun {
  readonly plan: ChainPlan;
  readonly input: Record<string, unknown>;
  /** The origin's recorded successes of the kept steps (their for_each elements, sub-chain steps and rounds included), marked as kept. */
  readonly kept: readonly StoredStep[];
  readonly rerun_of: string;
  readonly rerun_from?: string;
}

export interface RerunRefusal {
  /** The origin's chain, when it is known. */
  readonly chain: string;
  readonly input: unknown;
  readonly error: { readonly code: ErrorCode; readonly message: string };
}

/** What a re-run's record carries beyond a run's: the run it re-runs and the step it starts from. */
export function rerunOrigin(r: Rerun): { readonly rerun_of: string; readonly rerun_from?: string } {
  return { rerun_of: r.rerun_of, ...(r.rerun_from !== undefined ? { rerun_from: r.rerun_from } : {}) };
}

/**
 * A re-run just created: its kept results written under its epoch, before anything runs. Throws
 * RUN_ID_CONFLICT when its id named a recorded run (a re-run is always a new one), STORE_FENCED
 * when another owner took it meanwhile.
 */
export async function keepResults(store: RunStore, outcome: CreateOutcome, r: Rerun): Promise<StoredRun> {
  const { run } = outcome;
  if (!outcome.created) throw rerunIdTaken(run.id);
  if (r.kept.length > 0 && (await store.recordSteps([{ run_id: run.id, epoch: run.epoch, steps: r.kept }]))[0] !== 'ok') throw fenced(run.id);
  return run;
}

/** A re-run's options parted: what to re-run, and the new run's own options. */
export function splitRerunOptions(options: RerunOptions): { request: RerunRequest; given: RunStartOptions } {
  const { from, input, allowChanged, ...given } = options;
  return { request: { ...(from !== undefined ? { from } : {}), ...(input !== undefined ? { input } : {}), ...(allowChanged !== undefined ? { allowChanged } : {}) }, given };
}

/** Plans a re-run of `originId`, or says why there can be none (a store that cannot be read too). Reads the store; writes nothing. */
export async function planRerun(store: RunStore, originId: string, chain: (name: string) => ChainPlan | undefined, request: RerunRequest): Promise<Rerun | RerunRefusal> {
  try {
    return await planFromStore(store, originId, chain, request);
  } catch (error) {
    const e = error instanceof ToolchainError ? error : new ToolchainError('STORE_UNAVAILABLE', String(error));
    return refusal('(unknown)', undefined, e.code, e.message);
  }
}

async function planFromStore(store: RunStore, originId: string, chain: (name: string) => ChainPlan | undefined, request: RerunRequest): Promise<Rerun | RerunRefusal> {
  const origin = await store.getRun(originId);
  if (origin === undefined) return refusal('(unknown)', undefined, 'RUN_NOT_FOUND', `no run ${originId} in the run store ${store.url}`);
  const refuse = (code: ErrorCode, message: string): RerunRefusal => refusal(origin.chain, origin.input, code, message);
  if (origin.status === 'running' || origin.status === 'waiting') {
    const what = origin.status === 'waiting' ? 'is waiting' : 'has not ended (it is running, or its owner died: resume it or cancel it first)';
    return refuse('RUN_NOT_FINISHED', `run ${originId} ${what}; a re-run starts from a run that ended`);
  }
  const plan = chain(origin.chain);
  if (plan === undefined) return refuse('CHAIN_NOT_FOUND', `run ${originId} ran chain '${origin.chain}', which is not loaded`);
  if (plan.hash !== origin.chain_hash && request.allowChanged !== true) {
    return refuse('CHAIN_CHANGED', `chain '${origin.chain}' changed since run ${originId} ran; re-run with --allow-changed (allowChanged: true) to run it with the new definition, keeping the recorded outputs of the steps it does not re-run`);
  }
  const given = isRecord(origin.input) ? origin.input : {};
  const input: Record<string, unknown> = { ...given, ...request.input };

  if (request.from === undefined) return { plan, input, kept: [], rerun_of: originId };
  const from = plan.steps.find((s) => s.name === request.from);
  if (from === undefined) {
    const names = plan.steps.map((s) => s.name);
    const suggestion = didYouMean(request.from, names);
    return refuse('STEP_NOT_FOUND', `chain '${plan.name}' has no step '${request.from}'${suggestionSuffix(suggestion)}; its steps: ${names.join(', ')}`);
  }
  const again = downstream(plan, from.index);
  const recorded = await store.getSteps(originId);
  // Kept: the steps not downstream of `from` that have a recorded success (any other one runs).
  const succeeded = new Set(recorded.filter((s) => s.status === 'succeeded' && s.key === s.step).map((s) => s.key));
  const keptSteps = plan.steps.filter((s) => !again.has(s.index) && succeeded.has(s.name));

  // A kept step must not have read an input that now has another value.
  const changed = Object.keys(request.input ?? {}).filter((key) => !jsonEqual(given[key], input[key]));
  for (const key of changed) {
    const reader = keptSteps.find((s) => reads(s, key));
    if (reader !== undefined) {
      return refuse(
        'RERUN_INPUT_READ',
        `input '${key}' is read by step '${reader.name}', which a re-run from '${from.name}' keeps (its recorded output came from the old value); re-run from '${reader.name}' or a step before it, or leave '${key}' as it was`,
      );
    }
  }

  const keptNames = new Set(keptSteps.map((s) => s.name));
  const kept: StoredStep[] = [];
  for (const s of recorded) {
    if (s.status !== 'succeeded' || !keptNames.has(stepOf(s.key))) continue;
    const { earlier: _earlier, resumed_at: _resumed, ...result } = s;
    kept.push({ ...result, kept_from: originId });
  }
  return { plan, input, kept, rerun_of: originId, rerun_from: from.name };
}

export function isRefusal(r: Rerun | RerunRefusal): r is RerunRefusal {
  return 'error' in r;
}

function refusal(chain: string, input: unknown, code: ErrorCode, message: string): RerunRefusal {
  return { chain, input, error: { code, message } };
}

/** Step `start` and every step that waits for it, directly or through others. */
export function downstream(plan: ChainPlan, start: number): Set<number> {
  const seen = new Set<number>([start]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    for (const next of plan.steps[queue[head]!]!.dependents) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}

/** Whether step `step` reads the run-context member `name` (an input): in its input, `when`, `for_each`, fallback or `repeat.until`; a path without a root (`$..x`, `$.*`) reads every member. */
export function reads(step: PlanStep, name: string): boolean {
  const roots: (string | undefined)[] = [];
  const add = (refs: readonly PathRef[] | undefined): void => {
    for (const r of refs ?? []) roots.push(r.root);
  };
  add(step.input.refs);
  add(step.when?.refs);
  if (step.forEach !== undefined) roots.push(step.forEach.items.root, ...step.forEach.items.filterRoots);
  const fb = step.fallback;
  if (fb !== undefined && fb.kind !== 'output') add(fb.input?.refs);
  if (step.repeat !== undefined) add(step.repeat.until.refs.filter((r) => r.root !== THIS));
  return roots.some((root) => root === undefined || root === name);
}
