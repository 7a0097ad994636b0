// Executor figures at scale, each next to a hand-written baseline in this process:
// - width 10,000: one step fanning out to 10,000 parallel steps and a join, and a for_each over
//   10,000 items (max_concurrency 10,000): overhead per step ≤ 1.5 µs with default V8 flags;
// - memory per pending tool call at width 10,000 (every call parked on a promise we hold): ≤ 1 KB;
// - 10,000 linear10 runs parked at their first step: RSS ≤ 150 MB, all started in ≤ 0.2 s.

import { createEngine, type Engine } from '../src/engine/engine.js';
import { median, runIfMain, verdict, type BenchResult } from './harness.js';
import { benchTools, workloads } from './executor-workloads.js';

const WIDTH = 10_000;
const N_SCHEMA = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } as const;
const inc = async (args: Record<string, unknown>): Promise<{ n: number }> => ({ n: (args.n as number) + 1 });

/** A tool whose calls wait until `release()`: what keeps calls pending while memory is measured. */
function parkingTool(): { release: () => void; handler: (args: Record<string, unknown>) => Promise<{ n: number }> } {
  let waiting: (() => void)[] = [];
  return {
    release: () => {
      const all = waiting;
      waiting = [];
      for (const go of all) go();
    },
    handler: (args) => new Promise((resolve) => waiting.push(() => resolve({ n: (args.n as number) + 1 }))),
  };
}

const heap = (): number => {
  global.gc?.();
  return process.memoryUsage().heapUsed;
};

async function medianMs(fn: () => Promise<unknown>, runs: number): Promise<number> {
  await fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return median(out);
}

async function width(engine: Engine): Promise<string[]> {
  const wide = workloads.fanout(WIDTH, 'inc', 'wide10k');
  engine.addChain(wide.yaml);
  const items = Array.from({ length: WIDTH }, (_, i) => i);
  engine.addChain(`name: each10k\ninputs: { items: { type: array, items: { type: integer } } }\nsteps:\n  - name: each\n    tool: inc\n    for_each: $.items\n    max_concurrency: ${WIDTH}\n    input_map: { n: $.item }\n`);
  const eachBaseline = async (): Promise<unknown> => Promise.all(items.map((n) => inc({ n })));
  const lines: string[] = [];
  for (const [name, run, baseline, steps] of [
    ['steps', () => engine.run('wide10k', wide.input), wide.baseline, wide.steps],
    ['for_each', () => engine.run('each10k', { items }), eachBaseline, WIDTH],
  ] as const) {
    const check = await run();
    if (check.status !== 'succeeded') throw new Error(`${name}: ${JSON.stringify(check.error)}`);
    const e = await medianMs(run, 9);
    const b = await medianMs(baseline, 9);
    const perStep = ((e - b) * 1000) / steps;
    lines.push(`width ${WIDTH} (${name}): engine ${e.toFixed(1)} ms, baseline ${b.toFixed(1)} ms → ${perStep.toFixed(2)} µs per step (target ≤ 1.5 µs) ${verdict(perStep <= 1.5)}`);
  }
  return lines;
}

async function pendingMemory(engine: Engine): Promise<string[]> {
  const park = parkingTool();
  engine.registerTool({ name: 'park', parameters: N_SCHEMA, handler: park.handler });
  engine.addChain(workloads.fanout(WIDTH, 'inc', 'wide_park').yaml.replace('name: wide_park', 'name: wide_park').replace(/(name: p\d+, )tool: inc/g, '$1tool: park'));
  // Twice, the first unmeasured: it binds the plan, compiles validators and grows the heap's
  // spaces, which would otherwise count as (or, freed later, against) the pending calls.
  let perCall = 0;
  for (let round = 0; round < 2; round++) {
    const before = heap();
    const running = engine.run('wide_park', { n: 0 });
    await new Promise((r) => setTimeout(r, 50));
    const during = heap();
    park.release();
    await running;
    perCall = (during - before) / WIDTH;
  }

  const base = parkingTool();
  const b0 = heap();
  const all = Promise.all(Array.from({ length: WIDTH }, () => base.handler({ n: 1 })));
  const b1 = heap();
  base.release();
  await all;
  const basePerCall = (b1 - b0) / WIDTH;
  return [`memory per pending tool call at width ${WIDTH}: ${(perCall / 1024).toFixed(2)} KB (target ≤ 1 KB) ${verdict(perCall <= 1024)}; baseline ${(basePerCall / 1024).toFixed(2)} KB`];
}

async function parkedRuns(engine: Engine): Promise<string[]> {
  const park = parkingTool();
  engine.registerTool({ name: 'park_first', parameters: N_SCHEMA, handler: park.handler });
  const linear = workloads.linear10().yaml.replace('name: linear10', 'name: linear10_parked').replace('tool: inc', 'tool: park_first');
  engine.addChain(linear);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const t = performance.now();
  const runs = Array.from({ length: WIDTH }, (_, i) => engine.run('linear10_parked', { n: i }));
  const started = performance.now() - t;
  await new Promise((r) => setTimeout(r, 20));
  const rss = process.memoryUsage().rss;
  const t2 = performance.now();
  park.release();
  const results = await Promise.all(runs);
  const finished = performance.now() - t2;
  const wrong = results.filter((r, i) => (r.outputs as { n: number } | null)?.n !== i + 10).length;
  const mb = rss / 1024 / 1024;
  return [
    `${WIDTH} linear10 runs parked at their first step: started in ${(started / 1000).toFixed(3)} s (target ≤ 0.2 s) ${verdict(started <= 200)}; ` +
      `RSS ${mb.toFixed(0)} MB (${((rss - rss0) / 1024 / 1024).toFixed(0)} MB for the runs; target ≤ 150 MB) ${verdict(mb <= 150)}; finished ${(finished / 1000).toFixed(3)} s after release, ${wrong} wrong`,
  ];
}

export async function benchExecutorScale(): Promise<BenchResult> {
  const engine = await createEngine({ cache: 'off' });
  for (const tool of benchTools) engine.registerTool(tool);
  const lines = [...(await parkedRuns(engine)), ...(await width(engine)), ...(await pendingMemory(engine))];
  await engine.close();
  return { name: 'executor at scale', lines };
}

await runIfMain(import.meta.url, benchExecutorScale);
