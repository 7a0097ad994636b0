import { ToolchainError } from '../common/errors.js';
import { jsonEqual } from '../expr/json-equal.js';
import type { StoredRun } from '../store/types.js';

// A caller's run id is an idempotency key for one request: the same chain with the same input.
// The same id with another chain or input is another request, which must not be answered with
// the first one's result as if it were its own.

/** RUN_ID_CONFLICT when the recorded run was another chain or input (`input` as the store keeps it), else undefined. */
export function runIdConflict(run: Pick<StoredRun, 'id' | 'chain' | 'input'>, chain: string, input: unknown): ToolchainError | undefined {
  if (run.chain === chain && jsonEqual(run.input ?? {}, input ?? {})) return undefined;
  const what = run.chain !== chain ? `chain '${run.chain}', not '${chain}'` : 'another input';
  return new ToolchainError('RUN_ID_CONFLICT', `run id ${run.id} names a run of ${what}; a run id may be reused only for the same chain with the same input — pick a new id`);
}

/** RUN_ID_CONFLICT for a re-run given the id of a recorded run: a re-run is always a new run. */
export function rerunIdTaken(id: string): ToolchainError {
  return new ToolchainError('RUN_ID_CONFLICT', `run id ${id} names a recorded run already; a re-run is a new run: give it an id of its own`);
}
