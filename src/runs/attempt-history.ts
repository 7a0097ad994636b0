import type { EarlierResult, StoredStep } from '../store/types.js';

// One history for a run that was resumed: a step that runs again (it failed, or was skipped by a
// failure) is recorded with what it did before, and every result of a resumed execution with
// when the run was resumed, so `runs show`, the API and the inspector can show each attempt and
// each resume — the store itself keeps only a step's latest result.

export interface Resumption {
  /** When the run was taken up again. */
  readonly at: number;
  /** The recorded results that are not successes, by step key: they will be replaced. */
  readonly replaced: ReadonlyMap<string, StoredStep>;
}

export function resumption(at: number, recorded: readonly StoredStep[]): Resumption {
  const replaced = new Map<string, StoredStep>();
  for (const step of recorded) if (step.status !== 'succeeded') replaced.set(step.key, step);
  return { at, replaced };
}

/** A result of a resumed execution, with the step's earlier results and the resume's time. */
export function withHistory(step: StoredStep, resumed: Resumption): StoredStep {
  const before = resumed.replaced.get(step.key);
  if (before === undefined) return { ...step, resumed_at: resumed.at };
  const own: EarlierResult = {
    status: before.status,
    attempts: before.attempts,
    started_at: before.started_at,
    duration_ms: before.duration_ms,
    ...(before.error !== undefined ? { error: before.error } : {}),
    ...(before.resumed_at !== undefined ? { resumed_at: before.resumed_at } : {}),
  };
  return { ...step, earlier: [...(before.earlier ?? []), own], resumed_at: resumed.at };
}

/** Attempts over every execution of the step. */
export function allAttempts(step: StoredStep): number {
  let n = step.attempts;
  for (const e of step.earlier ?? []) n += e.attempts;
  return n;
}

/** When the run was resumed, as its results say, oldest first. */
export function resumeTimes(steps: readonly StoredStep[]): number[] {
  const times = new Set<number>();
  for (const s of steps) {
    if (s.resumed_at !== undefined) times.add(s.resumed_at);
    for (const e of s.earlier ?? []) if (e.resumed_at !== undefined) times.add(e.resumed_at);
  }
  return [...times].sort((a, b) => a - b);
}
