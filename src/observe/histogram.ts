import type { Registry } from 'prom-client';

// A Prometheus histogram whose observations cost a few array writes. prom-client's own Histogram
// hashes the label values on every observe, too much for a per-step metric (the observe bench
// holds all of a step's metrics and logs to a budget). This one keeps counts per label set in arrays
// and hands prom-client's Registry the same samples a prom-client Histogram would (`_bucket`
// cumulative with `le`, `_sum`, `_count`), so /metrics cannot tell them apart.

export interface HistogramChild {
  observe(value: number): void;
}

interface Series {
  readonly labels: Record<string, string>;
  /** Per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

interface Sample {
  readonly metricName: string;
  readonly labels: Record<string, string | number>;
  readonly value: number;
}

export class LabelledHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // The Registry needs only `name`, `help`, `type`, `get()` and `reset()` of a metric.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of these label values (in `labelNames` order); keep it: observing through it is cheap. */
  labels(...values: string[]): HistogramChild {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (s === undefined) {
      const labels = Object.fromEntries(this.labelNames.map((n, i) => [n, values[i] ?? '']));
      s = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const series = s;
    const bounds = this.bounds;
    return {
      observe(value: number): void {
        let b = 0;
        while (b < bounds.length && value > bounds[b]!) b++;
        series.counts[b]! += 1;
        series.sum += value;
        series.count += 1;
      },
    };
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      for (let b = 0; b < this.bounds.length; b++) {
        acc += s.counts[b]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: this.bounds[b]!, ...s.labels }, value: acc });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
