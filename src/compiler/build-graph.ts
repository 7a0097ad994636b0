import { cycles, pathText, shortestPath, topologicalOrder, type Successors } from '../common/directed-graph.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';

// Edges come from references, `depends_on`, and order (a step without `parallel: true`
// waits for every step above it). Order edges are added only from the steps since the last
// non-parallel one: that step already waits for everything before it, so the rest is implied.

export type EdgeKind = 'reference' | 'depends_on' | 'order';

/** One reason step `to` waits for step `from`, with the node that says so. */
export interface Edge {
  readonly from: number;
  readonly to: number;
  readonly kind: EdgeKind;
  /** Pointer of the node that creates the edge (the path string, the depends_on entry, the step). */
  readonly pointer: string;
  /** The path or name as written, for messages. */
  readonly text: string;
}

export interface StepNode {
  readonly name: string;
  readonly pointer: string;
  readonly parallel: boolean;
}

export interface Graph {
  readonly waitsFor: readonly (readonly number[])[];
  readonly skipsWith: readonly (readonly number[])[];
  readonly dependents: readonly (readonly number[])[];
  readonly order: readonly number[];
  readonly roots: readonly number[];
}

export function orderEdges(steps: readonly StepNode[]): Edge[] {
  const edges: Edge[] = [];
  let lastBarrier = 0;
  steps.forEach((step, i) => {
    if (step.parallel) return;
    for (let j = lastBarrier; j < i; j++) edges.push({ from: j, to: i, kind: 'order', pointer: step.pointer, text: steps[j]!.name });
    lastBarrier = i;
  });
  return edges;
}

/** Builds the DAG, or reports every cycle (naming its steps) and returns undefined. */
export function buildGraph(steps: readonly StepNode[], edges: readonly Edge[], sink: DiagnosticSink): Graph | undefined {
  const n = steps.length;
  const pair = (from: number, to: number): number => from * n + to;
  // The first edge between two steps is the one reported in a cycle; references and depends_on
  // come before order edges so that a forward reference is named by the reference itself.
  const byPair = new Map<number, Edge>();
  for (const e of edges) if (e.kind !== 'order' && !byPair.has(pair(e.from, e.to))) byPair.set(pair(e.from, e.to), e);
  for (const e of edges) if (e.kind === 'order' && !byPair.has(pair(e.from, e.to))) byPair.set(pair(e.from, e.to), e);
  const waitsFor = steps.map(() => new Set<number>());
  for (const e of byPair.values()) waitsFor[e.to]!.add(e.from);
  const next = successors(n, byPair.values());

  // The common case is a DAG: sort first, and look for the cycles only when sorting finds one.
  const order = topologicalOrder(next);
  if (order === undefined) {
    reportCycles(next, steps, byPair, pair, sink);
    return undefined;
  }
  const skipsWith = steps.map(() => new Set<number>());
  const dependents = steps.map(() => new Set<number>());
  dropImpliedOrderEdges(order, waitsFor, (from, to) => byPair.get(pair(from, to))?.kind === 'order');
  waitsFor.forEach((preds, to) => preds.forEach((from) => dependents[from]!.add(to)));
  for (const e of edges) if (e.kind !== 'order') skipsWith[e.to]!.add(e.from);
  const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b);
  return {
    waitsFor: waitsFor.map(sorted),
    skipsWith: skipsWith.map(sorted),
    dependents: dependents.map(sorted),
    order,
    roots: steps.map((_, i) => i).filter((i) => waitsFor[i]!.size === 0),
  };
}

/** For each step, the steps that wait for it, ascending. */
function successors(n: number, edges: Iterable<Edge>): number[][] {
  const next: number[][] = Array.from({ length: n }, () => []);
  for (const e of edges) next[e.from]!.push(e.to);
  for (const list of next) list.sort((a, b) => a - b);
  return next;
}

/**
 * An order edge that another path already implies (`a → b → e` makes `a → e` redundant) is
 * dropped: it changes nothing about when a step may start, but it would clutter the graph and
 * cost a counter update per run. Reference and depends_on edges are kept: they carry skips.
 *
 * For a step with an order edge and another: one backward search from the steps it waits for,
 * through their ancestors, finds every step it waits for that another one waits for already. The
 * search never goes above the earliest (in `order`) order-edge source, since nothing there can
 * lie on a path from it: a chain of any length costs a pass over its edges (ancestor sets, as
 * before, cost n² bits: 1.2 GB at 100,000 steps).
 */
function dropImpliedOrderEdges(order: readonly number[], waitsFor: Set<number>[], isOrder: (from: number, to: number) => boolean): void {
  const pos = new Int32Array(waitsFor.length);
  order.forEach((step, k) => (pos[step] = k));
  const seen = new Int32Array(waitsFor.length); // stamp: i + 1 once seen in step i's search
  const queue: number[] = [];
  for (const i of order) {
    const preds = waitsFor[i]!;
    if (preds.size < 2) continue;
    let floor = Infinity;
    for (const p of preds) if (isOrder(p, i)) floor = Math.min(floor, pos[p]!);
    if (floor === Infinity) continue;
    queue.length = 0;
    for (const q of preds) for (const a of waitsFor[q]!) if (pos[a]! >= floor && seen[a] !== i + 1) (seen[a] = i + 1), queue.push(a);
    for (let head = 0; head < queue.length; head++) {
      const a = queue[head]!;
      if (pos[a] === floor) continue;
      for (const b of waitsFor[a]!) if (pos[b]! >= floor && seen[b] !== i + 1) (seen[b] = i + 1), queue.push(b);
    }
    for (const p of [...preds]) if (seen[p] === i + 1 && isOrder(p, i)) preds.delete(p);
  }
}

function reportCycles(next: Successors, steps: readonly StepNode[], byPair: Map<number, Edge>, pair: PairKey, sink: DiagnosticSink): void {
  for (const e of byPair.values()) {
    if (e.from === e.to) {
      const what = e.kind === 'reference' ? `reads its own output (${e.text})` : 'lists itself in depends_on';
      sink.error('SELF_DEPENDENCY', e.pointer, `step '${steps[e.to]!.name}' ${what}`);
    }
  }
  // Self-dependencies are reported above; a cycle named below goes through other steps.
  const others = next.map((list, from) => list.filter((to) => to !== from));
  for (const component of cycles(others)) reportCycle(component, others, steps, byPair, pair, sink);
}

type PairKey = (from: number, to: number) => number;

function reportCycle(component: number[], next: Successors, steps: readonly StepNode[], byPair: Map<number, Edge>, pair: PairKey, sink: DiagnosticSink): void {
  const members = new Set(component);
  // The shortest way round from the component's first step (in the file) back to it.
  const start = component.reduce((a, b) => Math.min(a, b));
  const round = shortestPath(start, start, next, (step) => members.has(step))!;
  const cycle = round.slice(0, -1);
  const cycleEdges = cycle.map((from, k) => byPair.get(pair(from, round[k + 1]!))!);
  const names = pathText(round.map((i) => steps[i]!.name));
  // A cycle closed by order is a reference to a later step that waits for this one by order.
  const forward = cycleEdges.find((e) => e.kind !== 'order' && e.from > e.to);
  if (forward && cycleEdges.some((e) => e.kind === 'order')) {
    const reader = steps[forward.to]!.name;
    const later = steps[forward.from]!.name;
    sink.error(
      'FORWARD_REFERENCE',
      forward.pointer,
      `step '${reader}' reads '${later}' (${forward.text}), which comes later in the file and waits for '${reader}' by order (${names}); ` +
        `mark '${later}' parallel: true, or move it above '${reader}'`,
    );
    return;
  }
  const first = cycleEdges[cycleEdges.length - 1]!;
  sink.error('CHAIN_CYCLE', first.pointer, `steps form a cycle: ${names}`);
}
