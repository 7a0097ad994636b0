import { formatDuration, type RunDetail } from './api.js';

// The timeline: one row per step that started (in start order), one bar per attempt, placed on
// the run's time axis. Failed attempts are red, the wait before a retry is the gap between bars,
// a fallback's bar is striped, a for_each element's failed attempt is a thin red mark.

export function Gantt({ run, now, selected, onSelect }: { run: RunDetail; now: number; selected: string | undefined; onSelect: (step: string) => void }) {
  const start = run.started_at;
  // An interrupted run's time stopped with its owner: its open attempts end there too.
  const stop = run.finished_at ?? (run.interrupted ? start + (run.duration_ms ?? 0) : now);
  const end = Math.max(stop, start + 1);
  const span = end - start;
  const rows = Object.entries(run.steps)
    .filter(([, s]) => s.started_at !== undefined)
    .sort(([, a], [, b]) => a.started_at! - b.started_at!);
  if (rows.length === 0) return <p class="muted">No step has started yet.</p>;
  const pct = (t: number): string => `${(Math.min(Math.max((t - start) / span, 0), 1) * 100).toFixed(3)}%`;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  // Where the run was resumed: a line across every row.
  const marks = (run.resumes ?? []).map((t) => <span class="resume-mark" style={{ left: pct(t) }} title={`resumed at ${new Date(t).toLocaleTimeString()}`} aria-label="resumed" />);
  return (
    <div class="gantt" role="table" aria-label="Attempts of each step over time">
      <div class="gantt-row gantt-axis" role="row">
        <span class="gantt-label" role="columnheader">step</span>
        <span class="gantt-track" role="columnheader">
          {marks}
          {ticks.map((t) => (
            <span class="tick" style={{ left: `${t * 100}%` }}>{formatDuration(t * span)}</span>
          ))}
        </span>
      </div>
      <div class="gantt-rows">
        {rows.map(([key, step]) => (
          <div class={`gantt-row${selected === key ? ' selected' : ''}`} role="row" key={key} data-step={key}>
            <span class="gantt-label" role="rowheader">
              <button type="button" class="link" onClick={() => onSelect(key)} title={key}>
                {key}
              </button>
            </span>
            <span class="gantt-track" role="cell">
              {marks}
              {step.status === 'skipped' && <span class="bar skipped" style={{ left: pct(step.started_at!), width: '2px' }} title="skipped" />}
              {step.timeline.map((a) => {
                const to = a.duration_ms !== undefined ? a.started_at + a.duration_ms : stop;
                const label = `${key} attempt ${a.attempt}${a.fallback ? ` (fallback: ${a.fallback})` : ''}${a.item !== undefined ? ` item ${a.item}` : ''}: ${a.status}, ${formatDuration(to - a.started_at)}${a.error ? `, ${a.error.code}` : ''}`;
                return (
                  <span
                    class={`bar ${a.status === 'running' && step.status === 'interrupted' ? 'interrupted' : a.status}${a.fallback ? ' fallback' : ''}${a.item !== undefined ? ' item' : ''}`}
                    style={{ left: pct(a.started_at), width: `max(3px, calc(${pct(to)} - ${pct(a.started_at)}))` }}
                    title={label}
                    aria-label={label}
                  />
                );
              })}
            </span>
          </div>
        ))}
      </div>
    </div>
  );
}
