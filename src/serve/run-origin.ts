import type { RunDetail as StoredDetail } from '../runs/stored-result.js';
import type { RunDetail, StepDetail } from './run-service.js';

// Where a run came from and what came of it, for `GET /api/runs/ID`: a re-run names the run it
// re-runs and the step it started from, and a run names its re-runs. A re-run's kept steps
// (results it took from its origin, restored rather than run) have no events; their records
// stand in for them, marked with the run they were kept from.

export function withOrigin(detail: RunDetail, stored: StoredDetail | undefined): RunDetail {
  if (stored === undefined) return detail;
  let steps: Record<string, StepDetail> | undefined;
  for (const [key, s] of Object.entries(stored.steps)) {
    if (s.kept_from === undefined || s.started_at === undefined) continue;
    steps ??= { ...detail.steps };
    const shown = steps[key];
    // Folded from the records already (a stored run): marked; not seen by a live view: the record.
    steps[key] =
      shown !== undefined && shown.status !== 'pending'
        ? { ...shown, kept_from: s.kept_from }
        : {
            status: s.status,
            attempts: s.attempts,
            duration_ms: s.duration_ms,
            started_at: s.started_at,
            ...(s.output !== undefined ? { output: s.output } : {}),
            ...(shown?.input !== undefined ? { input: shown.input } : {}),
            timeline: [{ attempt: s.attempts, started_at: s.started_at, duration_ms: s.duration_ms, status: s.status === 'failed' ? 'failed' : 'succeeded' }],
            kept_from: s.kept_from,
          };
  }
  return {
    ...detail,
    ...(steps !== undefined ? { steps } : {}),
    ...(stored.rerun_of !== undefined ? { rerun_of: stored.rerun_of } : {}),
    ...(stored.rerun_from !== undefined ? { rerun_from: stored.rerun_from } : {}),
    reruns: stored.reruns,
  };
}
