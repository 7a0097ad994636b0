import type { StepRecord } from '../run-model/step-record.js';
import type { StoredStep } from './types.js';

/** A step result with its key, as a literal with every key: a spread of the record costs several times more, on every step. */
export function storedStep(key: string, r: StepRecord): StoredStep {
  return { key, step: r.step, index: r.index, status: r.status, attempts: r.attempts, output: r.output, error: r.error, started_at: r.started_at, duration_ms: r.duration_ms, fallback: r.fallback, reason: r.reason };
}
