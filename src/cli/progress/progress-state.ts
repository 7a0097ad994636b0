import type { ForEachProgress, RunEvent } from '../../run-model/events.js';
import type { RunResult } from '../../run-model/result.js';

// What the live progress display shows, kept apart from drawing it: one row per step (sub-chain
// steps labelled with the step that runs them), built from run events, and the text of the block
// at a given moment. Pure, so the wording is tested without a terminal.

export type RowState = 'running' | 'retrying' | 'succeeded' | 'failed' | 'skipped';

interface Row {
  label: string;
  state: RowState;
  detail: string;
  /** A for_each step's `done/total`, while it runs. */
  count: string;
  /** When the current work began, for the elapsed timer of a running step. */
  since: number;
}

const MARK: Record<RowState, string> = {
  running: '\u001b[36m…\u001b[0m',
  retrying: '\u001b[33m↻\u001b[0m',
  succeeded: '\u001b[32m✓\u001b[0m',
  failed: '\u001b[31m✗\u001b[0m',
  skipped: '\u001b[90m–\u001b[0m',
};

export function ms(n: number): string {
  return n < 1000 ? `${Math.round(n)}ms` : `${(n / 1000).toFixed(1)}s`;
}

export class ProgressState {
  private readonly rows = new Map<string, Row>();
  private readonly prefix = new Map<string, string>();

  /** Applies an event; true when the block changed. */
  apply(e: RunEvent, now: number): boolean {
    if (e.type === 'run:started') {
      this.prefix.set(e.run_id, e.parent ? `${this.prefix.get(e.parent.run_id) ?? ''}${e.parent.step} › ` : '');
      return false;
    }
    if (!('step' in e) || e.type.startsWith('agent:')) return false;
    const key = `${e.run_id}/${e.step}`;
    // A step of on_failure or finally is named with its list, as `runs show` does.
    const phase = 'phase' in e ? e.phase : undefined;
    const list = phase === 'on_failure' || phase === 'finally' ? ` (${phase})` : '';
    const row = this.rows.get(key) ?? { label: `${this.prefix.get(e.run_id) ?? ''}${e.step}${list}`, state: 'running', detail: '', count: '', since: now };
    this.rows.set(key, row);
    switch (e.type) {
      case 'step:started':
        row.state = 'running';
        row.since = now;
        break;
      case 'step:retrying':
        row.state = 'retrying';
        row.detail = `attempt ${e.attempt} failed (${e.error.code}); ${e.fallback ? `fallback: ${e.fallback}` : `retrying in ${ms(e.delay_ms)}`}`;
        break;
      case 'step:succeeded':
        row.state = 'succeeded';
        row.detail = `${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}${e.fallback ? `, fallback ${e.fallback}` : ''}`;
        break;
      case 'step:failed':
        row.state = 'failed';
        row.detail = `${e.error.code} after ${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}`;
        break;
      case 'step:skipped':
        row.state = 'skipped';
        row.detail = e.reason === 'when' ? 'skipped (when)' : 'skipped (a step it needs was skipped)';
        break;
      default:
        return false;
    }
    return true;
  }

  /** A for_each step's elements done so far; true when the block changed. */
  progress(p: ForEachProgress): boolean {
    const row = this.rows.get(`${p.run_id}/${p.step}`);
    if (row === undefined) return false;
    row.count = `${p.done}/${p.total}`;
    return true;
  }

  /** True while some step is at work: the block then needs redrawing for its timer. */
  get busy(): boolean {
    for (const r of this.rows.values()) if (r.state === 'running' || r.state === 'retrying') return true;
    return false;
  }

  /** The block as text, one line per step; a running step shows how long it has been at work. */
  text(now: number): string {
    const lines: string[] = [];
    for (const r of this.rows.values()) {
      const detail = r.state === 'running' ? `${r.count ? `${r.count} · ` : ''}${ms(now - r.since)}` : r.state === 'retrying' ? `${r.detail} (${ms(now - r.since)})` : r.detail;
      lines.push(`${MARK[r.state]} ${r.label}${detail ? `  \u001b[90m${detail}\u001b[0m` : ''}`);
    }
    return lines.join('\n');
  }
}

/** The one line printed when the run is over. */
export function summaryLine(result: RunResult): string {
  const counts = new Map<string, number>();
  for (const s of Object.values(result.steps)) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  const parts = ['succeeded', 'failed', 'skipped', 'pending'].filter((k) => counts.get(k)).map((k) => `${counts.get(k)} ${k === 'pending' ? 'not run' : k}`);
  const mark = result.status === 'succeeded' ? '\u001b[32m✓\u001b[0m' : result.status === 'cancelled' ? '\u001b[33m⊘\u001b[0m' : '\u001b[31m✗\u001b[0m';
  // A run executed elsewhere (a queue's worker) may come back without step summaries: no dangling colon then.
  return `${mark} ${result.chain} ${result.status} in ${ms(result.duration_ms)}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}
