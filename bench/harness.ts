// Shared measuring helpers for `npm run bench`. Every figure is taken in one process next to a
// hand-written baseline of the same work, and printed as a ratio.

export interface BenchResult {
  readonly name: string;
  readonly lines: string[];
}

/** Nanoseconds per call of `fn` over `iterations` calls, after a warm-up. */
export function nsPerOp(fn: (i: number) => unknown, iterations: number, warmup = Math.min(20_000, iterations)): number {
  let sink = 0;
  for (let i = 0; i < warmup; i++) if (fn(i) !== undefined) sink += 1;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) if (fn(i) !== undefined) sink += 1;
  const elapsed = Number(process.hrtime.bigint() - start);
  if (sink < 0) console.log(sink); // keeps the results alive
  return elapsed / iterations;
}

/** Milliseconds of each of `runs` calls (after `warmup` unmeasured ones). */
export function samplesMs(fn: () => unknown, runs: number, warmup = 5): number[] {
  for (let i = 0; i < warmup; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export function verdict(ok: boolean): string {
  return ok ? 'ok' : 'MISSES TARGET';
}

/** Runs a bench module's function when the compiled file is started directly with node. */
export async function runIfMain(url: string, bench: () => Promise<BenchResult>): Promise<void> {
  if (url !== `file://${process.argv[1] ?? ''}`) return;
  const { name, lines } = await bench();
  console.log(name);
  for (const line of lines) console.log(`  ${line}`);
}
