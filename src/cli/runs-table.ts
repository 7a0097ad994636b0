import type { RunDetail, RunSummary } from '../runs/stored-result.js';
import { printable } from '../common/printable.js';

// `toolchain runs` and `runs show` for people: aligned columns, durations in ms or s, times in
// the machine's local time. Machines read `--json`.

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${(ms / 60_000).toFixed(1)}m`;
}

function time(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Rows of cells as aligned columns; every cell is made printable first (cells hold recorded text: names, codes, messages). */
export function table(cells: readonly (readonly string[])[]): string {
  const rows = cells.map((r) => r.map(printable));
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n') + '\n';
}

/** `interrupted` for a run whose owner is gone (the store says `running`). */
function shownStatus(run: RunSummary): string {
  return run.interrupted ? 'interrupted' : run.status;
}

export function runsTable(runs: readonly RunSummary[]): string {
  if (runs.length === 0) return 'no runs recorded\n';
  return table([['RUN', 'CHAIN', 'STATUS', 'STARTED', 'DURATION', 'ERROR'], ...runs.map((r) => [r.run_id, r.chain, shownStatus(r), time(r.started_at), formatMs(r.duration_ms), r.error?.code ?? ''])]);
}

export function runTable(run: RunDetail): string {
  const head = `run ${run.run_id}  chain ${run.chain}  ${shownStatus(run)}  started ${time(run.started_at)}  ${formatMs(run.duration_ms)}\n`;
  const gone = run.interrupted ? `interrupted: its owner (${run.owner ?? 'unknown'}) is gone; resume it with: toolchain resume ${run.run_id}\n` : '';
  const error = run.error ? `error: ${run.error.code} ${run.error.message}${run.error.step ? ` (step '${run.error.step}')` : ''}\n` : '';
  // A re-run names its origin (its kept steps say `kept`), and a run re-run names its re-runs.
  const origin = run.rerun_of !== undefined ? `re-run of ${run.rerun_of}${run.rerun_from !== undefined ? ` from step '${run.rerun_from}'` : ' (every step)'}\n` : '';
  const reruns = run.reruns.length > 0 ? `re-runs: ${run.reruns.join(', ')}\n` : '';
  // A handler's step is named with its list (a compensation's name says it already).
  const steps = Object.entries(run.steps).map(([key, s]) => [
    s.phase === 'on_failure' || s.phase === 'finally' ? `${key} (${s.phase})` : key,
    s.kept_from !== undefined ? `${s.status} (kept)` : s.status,
    String(s.attempts),
    formatMs(s.duration_ms),
    s.error ? `${s.error.code} ${s.error.message}` : '',
  ]);
  const lines = [gone, error, origin, reruns].filter((l) => l !== '').map((l) => `${printable(l.slice(0, -1))}\n`).join('');
  return `${printable(head.slice(0, -1))}\n${lines}\n${table([['STEP', 'STATUS', 'ATTEMPTS', 'DURATION', 'ERROR'], ...steps])}`;
}
