// Compiled JSONPaths, in one process: a simple path (`$.a.b.c`) compiles to direct property
// access, measured against the same access written by hand and against compiling the path again
// on every run (what the engine never does: target at least 10× slower). General paths (RFC 9535
// wildcards, filters, descendants, slices, functions) run as closures over the parsed query.

import { compilePath } from '../src/expr/index.js';
import { nsPerOp, runIfMain, type BenchResult } from './harness.js';

const PATH = '$.locate.address.city';
const COMPILED_ITERATIONS = 5_000_000;
const GENERAL_ITERATIONS = 200_000;

const GENERAL = [
  '$.search.results[*].name',
  '$.search.results[?@.price < 3].name',
  '$..city',
  '$.search.results[1:4]',
  "$.locate['city','confidence']",
  "$.search.results[?match(@.name, 'n[0-4]')].name",
  '$.search.results[?length(@.tags) == 2 && @.price >= 2].price',
];

export async function benchExprPath(): Promise<BenchResult> {
  // A few contexts, so the compiled getter can't be folded to one object's constant.
  const contexts = Array.from({ length: 16 }, (_, i) => ({
    question: `q${i}`,
    locate: { city: `City ${i}`, address: { city: `City ${i}`, postcode: String(69000 + i) }, confidence: 0.5 },
    clock: { time: '12:00' },
    search: { results: Array.from({ length: 10 }, (_, k) => ({ name: `n${k}`, price: k + (i % 3), tags: ['a', 'b'] })) },
  }));
  const mask = contexts.length - 1;
  const path = compilePath(PATH);

  const compiled = nsPerOp((i) => path.get(contexts[i & mask]!), COMPILED_ITERATIONS);
  const byHand = nsPerOp((i) => contexts[i & mask]!.locate.address.city, COMPILED_ITERATIONS);
  const reparsed = nsPerOp((i) => compilePath(PATH).get(contexts[i & mask]!), GENERAL_ITERATIONS);
  const ratio = reparsed / compiled;
  const lines = [
    `compiled ${PATH}: ${compiled.toFixed(1)} ns/op (${COMPILED_ITERATIONS} ops); hand-written property access ${byHand.toFixed(1)} ns/op`,
    `compiled again on every run: ${reparsed.toFixed(1)} ns/op (${GENERAL_ITERATIONS} ops)`,
    `ratio: ${ratio.toFixed(1)}× faster (target ≥ 10×)${ratio >= 10 ? '' : ' — BELOW TARGET'}`,
  ];
  for (const source of GENERAL) {
    const general = compilePath(source);
    const ns = nsPerOp((i) => general.get(contexts[i & mask]!), GENERAL_ITERATIONS);
    lines.push(`general ${source}: ${ns.toFixed(1)} ns/op`);
  }
  return { name: 'expr-path', lines };
}

await runIfMain(import.meta.url, benchExprPath);
