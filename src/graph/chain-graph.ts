import type { ChainPlan, PlanStep } from '../compiler/plan.js';

// A compiled chain's DAG as plain data: what `GET /api/chains/NAME` sends, what the inspector
// draws and what `toolchain graph` renders. Edges from references and depends_on carry data
// (`data: true`) and propagate a skip; edges that exist only because of order in the file do not,
// and are drawn dashed.

export interface GraphNode {
  /** The step's name: its key in events, results and the run store. */
  readonly id: string;
  readonly index: number;
  readonly kind: PlanStep['target']['kind'];
  /** The tool, the sub-chain, or `agent <model>`. */
  readonly target: string;
  /** JSON pointer of the step in its file (`/steps/2`) and where it starts. */
  readonly pointer: string;
  readonly line: number;
  readonly col: number;
  readonly forEach?: string;
  readonly when?: string;
  readonly parallel: boolean;
  readonly onError: 'fail' | 'continue';
  readonly maxAttempts: number;
  readonly timeoutMs?: number;
  readonly fallback?: 'input' | 'tool' | 'output';
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  /** True for a reference or depends_on; false for an edge that comes from file order alone. */
  readonly data: boolean;
}

export interface ChainGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}

export function chainGraph(plan: ChainPlan): ChainGraph {
  const nodes = plan.steps.map((s): GraphNode => ({
    id: s.name,
    index: s.index,
    kind: s.target.kind,
    target: s.target.kind === 'tool' ? s.target.tool : s.target.kind === 'chain' ? s.target.chain : s.label,
    pointer: s.pointer,
    line: s.line,
    col: s.col,
    ...(s.forEach ? { forEach: s.forEach.items.source } : {}),
    ...(s.when ? { when: s.when.source } : {}),
    parallel: s.parallel,
    onError: s.onError,
    maxAttempts: s.retry.maxAttempts,
    ...(s.timeoutMs !== undefined ? { timeoutMs: s.timeoutMs } : {}),
    ...(s.fallback ? { fallback: s.fallback.kind } : {}),
  }));
  const edges = plan.steps.flatMap((to) =>
    to.waitsFor.map((i): GraphEdge => ({ from: plan.steps[i]!.name, to: to.name, data: to.skipsWith.includes(i) })),
  );
  return { nodes, edges };
}

/** The lines a node shows: its name, what it calls, and its loop and condition. */
export function nodeLines(node: GraphNode): string[] {
  const lines = [node.id, node.kind === 'chain' ? `chain ${node.target}` : node.target];
  if (node.forEach !== undefined) lines.push(`for each ${node.forEach}`);
  if (node.when !== undefined) lines.push(`when ${node.when}`);
  return lines;
}
