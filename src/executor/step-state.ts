// A step's status as a small integer in a per-run array: allocation-free transitions on the
// hot path. Every change goes through `advance`, the one place that knows which moves are legal;
// an illegal move is a bug in the executor and throws.

export const PENDING = 0;
export const RUNNING = 1;
export const SUCCEEDED = 2;
export const FAILED = 3;
export const SKIPPED = 4;

export type StatusCode = typeof PENDING | typeof RUNNING | typeof SUCCEEDED | typeof FAILED | typeof SKIPPED;

/** The statuses a run reports (SPEC §5). `validating` and `retrying` are moments of `running`, visible in events. */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export const STATUS_NAMES: readonly StepStatus[] = ['pending', 'running', 'succeeded', 'failed', 'skipped'];

// Bit `to` of LEGAL[from] is set when from → to is allowed. Terminal statuses allow nothing.
const LEGAL: readonly number[] = [
  (1 << RUNNING) | (1 << SKIPPED), // pending: starts, or is skipped without starting
  (1 << SUCCEEDED) | (1 << FAILED), // running: ends
  0,
  0,
  0,
];

export function advance(statuses: number[], index: number, to: StatusCode): void {
  const from = statuses[index]!;
  if ((LEGAL[from]! & (1 << to)) === 0) {
    throw new Error(`executor bug: step ${index} cannot go from ${STATUS_NAMES[from]} to ${STATUS_NAMES[to]}`);
  }
  statuses[index] = to;
}
