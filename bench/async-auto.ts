// The comparison, in the same process: async.auto (the fastest engine of the issue's
// table on linear10 and diamond) running the executor bench's shapes with the same handlers. Its
// per-step overhead is measured exactly as the engine's, against the same hand-written baseline,
// so the "lead every row" question has an answer on whatever machine the bench runs on. Every
// task is an `async` function: async.auto tells them from callback-style tasks by that tag.

import async from 'async';
import { benchTools } from './executor-workloads.js';

type N = { n: number };
type Handler = (args: Record<string, unknown>) => Promise<N>;
type Results = Record<string, N>;
type Task = ((results: Results) => Promise<N>) | [...string[], (results: Results) => Promise<N>];

const handler = (name: string): Handler => benchTools.find((t) => t.name === name)!.handler as Handler;
const inc = handler('inc');
const sum = handler('sum');

function linear10(): Record<string, Task> {
  const tasks: Record<string, Task> = { s0: async () => inc({ n: 0 }) };
  for (let i = 1; i < 10; i++) tasks[`s${i}`] = [`s${i - 1}`, async (r: Results) => inc({ n: r[`s${i - 1}`]!.n })];
  return tasks;
}

function diamond(): Record<string, Task> {
  return {
    a: async () => inc({ n: 0 }),
    b: ['a', async (r: Results) => inc({ n: r.a!.n })],
    c: ['a', async (r: Results) => inc({ n: r.a!.n })],
    d: ['a', async (r: Results) => inc({ n: r.a!.n })],
    e: ['b', 'c', 'd', async (r: Results) => sum({ values: [r.b!.n, r.c!.n, r.d!.n] })],
  };
}

function fanout100(): Record<string, Task> {
  const names = Array.from({ length: 100 }, (_, i) => `p${i}`);
  const tasks: Record<string, Task> = { root: async () => inc({ n: 0 }) };
  for (const p of names) tasks[p] = ['root', async (r: Results) => inc({ n: r.root!.n })];
  tasks.join = [...names, async (r: Results) => sum({ values: names.map((p) => r[p]!.n) })];
  return tasks;
}

/** One async.auto run of each shape, with the output the engine's run returns. */
export const asyncAuto: Readonly<Record<string, () => Promise<N>>> = {
  linear10: async () => ({ n: ((await async.auto(linear10() as never)) as Results).s9!.n }),
  diamond: async () => ({ n: ((await async.auto(diamond() as never)) as Results).e!.n }),
  fanout100: async () => ({ n: ((await async.auto(fanout100() as never)) as Results).join!.n }),
};
