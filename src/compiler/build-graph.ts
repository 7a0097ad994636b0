import { Graph as DagGraph, alg } from '@dagrejs/graphlib';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';

// SPEC §2.5: edges come from references, `depends_on`, and order (a step without `parallel: true`
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
  const g = new DagGraph({ directed: true, multigraph: false });
  steps.forEach((_, i) => g.setNode(String(i)));
  // The first edge between two steps is the one reported in a cycle; references and depends_on
  // come before order edges so that a forward reference is named by the reference itself.
  const byPair = new Map<string, Edge>();
  for (const e of [...edges].sort((a, b) => rank(a.kind) - rank(b.kind))) {
    const key = `${e.from}>${e.to}`;
    if (!byPair.has(key)) byPair.set(key, e);
    g.setEdge(String(e.from), String(e.to));
  }

  // The common case is a DAG: sort first, and look for the cycles only when sorting finds one.
  let order: number[];
  try {
    order = alg.topsort(g).map(Number);
  } catch (error) {
    if (!(error instanceof alg.CycleException)) throw error;
    reportCycles(g, steps, byPair, sink);
    return undefined;
  }
  const waitsFor = steps.map(() => new Set<number>());
  const skipsWith = steps.map(() => new Set<number>());
  const dependents = steps.map(() => new Set<number>());
  for (const e of byPair.values()) waitsFor[e.to]!.add(e.from);
  dropImpliedOrderEdges(order, waitsFor, byPair);
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

/**
 * An order edge that another path already implies (`a → b → e` makes `a → e` redundant) is
 * dropped: it changes nothing about when a step may start, but it would clutter the graph and
 * cost a counter update per run. Reference and depends_on edges are kept: they carry skips.
 */
function dropImpliedOrderEdges(order: readonly number[], waitsFor: Set<number>[], byPair: Map<string, Edge>): void {
  // Ancestor sets as bitsets: a long chain makes them O(n²) entries, which Sets make slow.
  const words = (waitsFor.length + 31) >>> 5;
  const ancestors = waitsFor.map(() => new Uint32Array(words));
  const has = (set: Uint32Array, i: number): boolean => (set[i >>> 5]! & (1 << (i & 31))) !== 0;
  for (const i of order) {
    const mine = ancestors[i]!;
    const preds = waitsFor[i]!;
    for (const p of preds) {
      mine[p >>> 5]! |= 1 << (p & 31);
      const theirs = ancestors[p]!;
      for (let w = 0; w < words; w++) mine[w]! |= theirs[w]!;
    }
    for (const p of [...preds]) {
      if (byPair.get(`${p}>${i}`)?.kind !== 'order') continue;
      for (const q of preds) {
        if (q !== p && has(ancestors[q]!, p)) {
          preds.delete(p);
          break;
        }
      }
    }
  }
}

function reportCycles(g: DagGraph, steps: readonly StepNode[], byPair: Map<string, Edge>, sink: DiagnosticSink): void {
  for (const e of byPair.values()) {
    if (e.from === e.to) {
      const what = e.kind === 'reference' ? `reads its own output (${e.text})` : 'lists itself in depends_on';
      sink.error('SELF_DEPENDENCY', e.pointer, `step '${steps[e.to]!.name}' ${what}`);
    }
  }
  for (const component of alg.findCycles(g)) {
    if (component.length >= 2) reportCycle(component.map(Number), steps, byPair, sink);
  }
}

function rank(kind: EdgeKind): number {
  return kind === 'order' ? 1 : 0;
}

function reportCycle(component: number[], steps: readonly StepNode[], byPair: Map<string, Edge>, sink: DiagnosticSink): void {
  const members = new Set(component);
  const cycle = findCycle(Math.min(...component), members, byPair);
  const cycleEdges = cycle.map((from, k) => byPair.get(`${from}>${cycle[(k + 1) % cycle.length]}`)!);
  const names = [...cycle, cycle[0]!].map((i) => steps[i]!.name).join(' → ');
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

/** A simple cycle through `start` inside one strongly connected component, in edge order. */
function findCycle(start: number, members: Set<number>, byPair: Map<string, Edge>): number[] {
  const next = new Map<number, number[]>();
  for (const e of byPair.values()) {
    if (members.has(e.from) && members.has(e.to) && e.from !== e.to) {
      const list = next.get(e.from) ?? [];
      list.push(e.to);
      next.set(e.from, list);
    }
  }
  const path: number[] = [];
  const visited = new Set<number>();
  const dfs = (n: number): boolean => {
    path.push(n);
    visited.add(n);
    for (const m of (next.get(n) ?? []).sort((a, b) => a - b)) {
      if (m === start) return true;
      if (!visited.has(m) && dfs(m)) return true;
    }
    path.pop();
    return false;
  };
  dfs(start);
  return path;
}
