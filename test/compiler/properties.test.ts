import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileChain } from '../../src/index.js';

// For random DAG-shaped chains, the compiled plan must order exactly what the chain language says
// (references, depends_on, and the order rule) and nothing more.

interface RandomStep {
  parallel: boolean;
  refs: number[];
  deps: number[];
}

const chainArb = fc.integer({ min: 1, max: 24 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.record({
        parallel: fc.boolean(),
        refs: fc.uniqueArray(fc.integer({ min: 0, max: Math.max(0, i - 1) }), { maxLength: i === 0 ? 0 : 3 }),
        deps: fc.uniqueArray(fc.integer({ min: 0, max: Math.max(0, i - 1) }), { maxLength: i === 0 ? 0 : 2 }),
      }),
    ),
  ),
);

function declaredEdges(steps: RandomStep[]): [number, number][] {
  const edges: [number, number][] = [];
  steps.forEach((s, i) => {
    for (const r of s.refs) edges.push([r, i]);
    for (const d of s.deps) edges.push([d, i]);
    if (!s.parallel) for (let j = 0; j < i; j++) edges.push([j, i]);
  });
  return edges;
}

function closure(n: number, edges: Iterable<[number, number]>): boolean[][] {
  const reach = Array.from({ length: n }, () => new Array<boolean>(n).fill(false));
  for (const [a, b] of edges) reach[a]![b] = true;
  for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) if (reach[i]![k]) for (let j = 0; j < n; j++) if (reach[k]![j]) reach[i]![j] = true;
  return reach;
}

function toYaml(steps: RandomStep[]): string {
  return stringify({
    name: 'random',
    steps: steps.map((s, i) => ({
      name: `s${i}`,
      tool: 'echo',
      ...(s.parallel ? { parallel: true } : {}),
      ...(s.deps.length ? { depends_on: s.deps.map((d) => `s${d}`) } : {}),
      input_map: Object.fromEntries(s.refs.map((r) => [`from_${r}`, `$.s${r}.value`])),
    })),
  });
}

describe('compiled order (property)', () => {
  it('respects every edge and leaves every independent pair unordered', () => {
    fc.assert(
      fc.property(chainArb, (steps) => {
        const { plan, diagnostics } = compileChain(toYaml(steps), { file: 'random.yaml' });
        expect(diagnostics).toEqual([]);
        const n = steps.length;
        const position = new Map(plan!.order.map((s, k) => [s, k]));
        const declared = declaredEdges(steps);
        for (const [a, b] of declared) expect(position.get(a)!).toBeLessThan(position.get(b)!);
        const planEdges = plan!.steps.flatMap((s) => s.waitsFor.map((w): [number, number] => [w, s.index]));
        expect(closure(n, planEdges)).toEqual(closure(n, declared));
        // Skips travel only along references and depends_on.
        plan!.steps.forEach((s, i) => expect([...s.skipsWith].sort()).toEqual([...new Set([...steps[i]!.refs, ...steps[i]!.deps])].sort()));
      }),
      { numRuns: 300 },
    );
  });
});
