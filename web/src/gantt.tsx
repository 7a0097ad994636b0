import { formatDuration, type RunDetail } from './api.js';

// The timeline: one row per step that started (in start order), one bar per attempt, placed on
// the run's time axis. Failed attempts are red, the wait before a retry is the gap between bars,
// a fallback's bar is striped, a for_each element's failed attempt is a thin red mark, and the time
// a step waited (a sleep, an event, a decision) is a bar of the waiting colour. A repeat step's
// rounds (`step#N`) are rows under their step, as for_each elements are. Failure handling comes
// after the steps it handles, each row tagged with its part (on_failure, undo for a compensation,
// finally), a line above the first of them.

export function Gantt({ run, now, selected, onSelect }: { run: RunDetail; now: number; selected: string | undefined; onSelect: (step: string) => void }) {
  const start = run.started_at;
  // An interrupted run's time stopped with its owner: its open attempts end there too.
  const stop = run.finished_at ?? (run.interrupted ? start + (run.duration_ms ?? 0) : now);
  const end = Math.max(stop, start + 1);
  const span = end - start;
  const rows = timelineRows(run);
  if (rows.length === 0) return <p class="muted">No step has started yet.</p>;
  const pct = (t: number): string => `${(Math.min(Math.max((t - start) / span, 0), 1) * 100).toFixed(3)}%`;
  const ticks = tickTimes(span).map((ms) => ms / span);
  // Where the run was resumed: a line across every row.
  const marks = (run.resumes ?? []).map((t) => <span class="resume-mark" style={{ left: pct(t) }} title={`resumed at ${new Date(t).toLocaleTimeString()}`} aria-label="resumed" />);
  return (
    <div class="gantt" role="table" aria-label="Attempts of each step over time">
      <div class="gantt-row gantt-axis" role="row">
        <span class="gantt-label" role="columnheader">step</span>
        <span class="gantt-track" role="columnheader">
          {marks}
          {ticks.map((t) => (
            <span class="tick" style={{ left: `${t * 100}%` }}>{formatDuration(Math.round(t * span))}</span>
          ))}
        </span>
      </div>
      <div class="gantt-rows">
        {rows.map(([key, step, element], k) => (
          <div
            class={`gantt-row${element ? ' element' : ''}${selected === key ? ' selected' : ''}${step.kept_from !== undefined ? ' kept' : ''}${step.phase ? ` phase-${step.phase}` : ''}${step.phase && !rows[k - 1]?.[1].phase ? ' phase-start' : ''}`}
            role="row"
            key={key}
            data-step={key}
            data-phase={step.phase}
          >
            <span class="gantt-label" role="rowheader">
              <button type="button" class="link" onClick={() => onSelect(key)} title={step.phase ? `${key} (${step.phase})` : key}>
                {step.phase && <span class="phase-tag">{step.phase === 'compensate' ? 'undo' : step.phase}</span>}
                {element ? key.slice(key.endsWith(']') ? key.lastIndexOf('[') : partStart(key)) : step.phase === 'compensate' ? key.replace(/~compensate$/, '') : key}
                {step.kept_from !== undefined ? ' (kept)' : ''}
              </button>
            </span>
            <span class="gantt-track" role="cell">
              {marks}
              {step.status === 'skipped' && <span class="bar skipped" style={{ left: pct(step.started_at!), width: '2px' }} title="skipped" />}
              {step.timeline.map((a) => {
                // A wait not over yet lasts until now.
                const to = a.duration_ms !== undefined && !(a.status === 'waiting' && step.status === 'waiting') ? a.started_at + a.duration_ms : stop;
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

type Row = [key: string, step: RunDetail['steps'][string], element: boolean];

/** Steps that started, in start order; each for_each element (`step[i]`) and repeat round (`step#N`) right under its step, in its own start order. */
function timelineRows(run: RunDetail): Row[] {
  const started = Object.entries(run.steps).filter(([, s]) => s.started_at !== undefined);
  const elements = new Map<string, Row[]>();
  const tops: Row[] = [];
  for (const [key, step] of started) {
    const open = key.endsWith(']') ? key.lastIndexOf('[') : partStart(key);
    const parent = open > 0 ? key.slice(0, open) : undefined;
    if (parent !== undefined && run.steps[parent] !== undefined) {
      const list = elements.get(parent) ?? [];
      list.push([key, step, true]);
      elements.set(parent, list);
    } else tops.push([key, step, false]);
  }
  const byStart = (a: Row, b: Row): number => a[1].started_at! - b[1].started_at! || elementIndex(a[0]) - elementIndex(b[0]);
  return tops.sort(byStart).flatMap((row) => [row, ...(elements.get(row[0])?.sort(byStart) ?? [])]);
}

function elementIndex(key: string): number {
  const m = /(?:\[(\d+)\]|#(\d+))$/.exec(key);
  return m ? Number(m[1] ?? m[2]) : -1;
}

/** Where a repeat round's suffix (`#N`) starts in its key; -1 for any other key. */
function partStart(key: string): number {
  const m = /#\d+$/.exec(key);
  return m ? m.index : -1;
}

/** Tick times on a round step (1, 2 or 5 times a power of ten, at least 1 ms): no two labels alike. */
function tickTimes(span: number): number[] {
  const rough = Math.max(1, span / 4);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough;
  const out: number[] = [];
  for (let t = 0; t <= span + 1e-9; t += step) out.push(t);
  return out;
}
