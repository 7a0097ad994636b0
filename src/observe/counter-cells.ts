import type { Counter } from 'prom-client';

// Counter increments on the hot path go to a plain number ("cell") per label set; prom-client's
// Counter receives the sums when it is scraped (its `collect` hook). A prom-client child's inc()
// re-hashes its labels on every call, which a per-step metric cannot afford (the observe bench).

export interface CounterCell {
  pending: number;
}

export class CounterCells<L extends string> {
  private readonly cells: { readonly labels: Partial<Record<L, string>>; readonly cell: CounterCell }[] = [];
  private readonly byKey = new Map<string, CounterCell>();

  /** A cell for these labels: `cell.pending++` counts one. */
  cell(labels: Partial<Record<L, string>>): CounterCell {
    const key = Object.values(labels).join('\u0000');
    let cell = this.byKey.get(key);
    if (cell === undefined) {
      cell = { pending: 0 };
      this.byKey.set(key, cell);
      this.cells.push({ labels, cell });
    }
    return cell;
  }

  /** Moves every pending count into the prom-client counter (call from its `collect`). */
  flush(counter: Counter<L>): void {
    for (const { labels, cell } of this.cells) {
      if (cell.pending === 0) continue;
      counter.inc(labels, cell.pending);
      cell.pending = 0;
    }
  }
}
