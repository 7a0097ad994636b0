// Plugin isolation: what one tool call costs with `isolation: worker` (a worker
// thread) and `process` (a child process) next to `none` (a plain call in this thread), for a
// small argument object. Targets: worker ≤ 50 µs of overhead per call, ≥ 10,000 calls/s. Each
// level runs the same plugin tool through `Tool.invoke` with a context that, like the call unit's,
// makes its AbortSignal only when the handler side asks for it. The baseline is the handler called
// directly in this process.

import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../src/engine/engine.js';
import type { IsolationLevel } from '../src/plugins/index.js';
import type { ToolContext } from '../src/registry/types.js';
import { percentile, runIfMain, verdict, type BenchResult } from './harness.js';

const SEQUENTIAL = 20_000;
const PIPELINED = 40_000;
const IN_FLIGHT = 64;

class Ctx implements ToolContext {
  readonly attempt = 1;
  readonly run_id = 'bench';
  readonly step = 'call';
  readonly idempotencyKey = 'bench:call';
  readonly env = {};
  private controller: AbortController | undefined;
  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }
  log(): void {}
}

const handler = ({ n, label }: { n: number; label: string }): { n: number; label: string } => ({ n: n + 1, label });

async function project(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'toolchain-bench-isolation-'));
  await mkdir(join(root, 'plugins', 'bench', 'tools'), { recursive: true });
  await writeFile(
    join(root, 'plugins', 'bench', 'plugin.yaml'),
    'name: bench\nversion: 1.0.0\ntools:\n  - name: inc\n    parameters: { type: object, properties: { n: { type: integer }, label: { type: string } } }\n',
  );
  await writeFile(join(root, 'plugins', 'bench', 'tools', 'inc.js'), 'export default ({ n, label }) => ({ n: n + 1, label });\n');
  return root;
}

interface Figures {
  /** Median µs of one call, one at a time. */
  readonly p50: number;
  readonly p99: number;
  /** Calls per second with IN_FLIGHT calls in flight. */
  readonly perSecond: number;
}

async function measure(call: (i: number) => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < 2_000; i++) await call(i);
  const samples = new Float64Array(SEQUENTIAL);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await call(i);
    samples[i] = (performance.now() - t) * 1000;
  }
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < PIPELINED) await call(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...samples];
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), perSecond: PIPELINED / seconds };
}

async function level(root: string, isolation: IsolationLevel): Promise<{ engine: Engine; figures: Figures }> {
  const engine = await createEngine({ pluginsDir: join(root, 'plugins'), cache: 'off', isolation });
  const tool = engine.tools().get('inc')!;
  const figures = await measure((i) => tool.invoke({ n: i, label: 'small' }, new Ctx()));
  return { engine, figures };
}

export async function benchIsolation(): Promise<BenchResult> {
  const root = await project();
  const lines: string[] = [];
  try {
    const baseline = await measure(async (i) => handler({ n: i, label: 'small' }));
    lines.push(`baseline (the handler called directly): p50 ${baseline.p50.toFixed(2)} µs, ${Math.round(baseline.perSecond)} calls/s`);
    let none: Figures | undefined;
    for (const isolation of ['none', 'worker', 'process'] as const) {
      const { engine, figures } = await level(root, isolation);
      await engine.close();
      none ??= figures;
      const overhead = figures.p50 - none.p50;
      let verdictText = '';
      if (isolation === 'worker') verdictText = ` (targets: overhead ≤ 50 µs, ≥ 10,000 calls/s) ${verdict(overhead <= 50 && figures.perSecond >= 10_000)}`;
      lines.push(
        `isolation ${isolation}: p50 ${figures.p50.toFixed(2)} µs, p99 ${figures.p99.toFixed(2)} µs per call; ${Math.round(figures.perSecond)} calls/s with ${IN_FLIGHT} in flight` +
          (isolation === 'none' ? ` (${(figures.p50 - baseline.p50).toFixed(2)} µs over the bare handler)` : `; overhead over none ${overhead.toFixed(2)} µs${verdictText}`),
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return { name: 'plugin isolation', lines };
}

await runIfMain(import.meta.url, benchIsolation);
