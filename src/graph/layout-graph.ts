import dagre from '@dagrejs/dagre';
import { nodeLines, type ChainGraph, type GraphEdge, type GraphNode } from './chain-graph.js';

// Positions for a chain's DAG, by dagre (a layered "Sugiyama" layout: ranks top to bottom, few
// crossings). Shared by the inspector (bundled by Vite) and `toolchain graph --format svg|png`,
// so a chain looks the same in both. Labels are monospace, so their width is known without a
// font: CHAR_WIDTH per character at FONT_SIZE.

export const FONT_SIZE = 12;
export const CHAR_WIDTH = 7.3;
export const LINE_HEIGHT = 16;
const PAD_X = 12;
const PAD_Y = 8;
/** Long `when`/`for_each` sources are cut to this many characters in a node. */
export const MAX_LABEL_CHARS = 40;

export interface PlacedNode {
  readonly node: GraphNode;
  readonly lines: readonly string[];
  /** Top-left corner and size. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface PlacedEdge {
  readonly edge: GraphEdge;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export interface GraphLayout {
  readonly width: number;
  readonly height: number;
  readonly nodes: readonly PlacedNode[];
  readonly edges: readonly PlacedEdge[];
}

export function clip(text: string, max = MAX_LABEL_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function layoutGraph(graph: ChainGraph, margin = 16): GraphLayout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 36, marginx: margin, marginy: margin });
  g.setDefaultEdgeLabel(() => ({}));
  const lines = new Map<string, string[]>();
  for (const node of graph.nodes) {
    const text = nodeLines(node).map((l) => clip(l));
    lines.set(node.id, text);
    const longest = Math.max(...text.map((l) => l.length));
    g.setNode(node.id, { width: Math.ceil(longest * CHAR_WIDTH + 2 * PAD_X), height: text.length * LINE_HEIGHT + 2 * PAD_Y });
  }
  for (const edge of graph.edges) g.setEdge(edge.from, edge.to);
  dagre.layout(g);
  const nodes = graph.nodes.map((node): PlacedNode => {
    const n = g.node(node.id) as { x: number; y: number; width: number; height: number };
    return { node, lines: lines.get(node.id)!, x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height };
  });
  const edges = graph.edges.map((edge): PlacedEdge => ({
    edge,
    points: ((g.edge(edge.from, edge.to) as { points?: { x: number; y: number }[] } | undefined)?.points ?? []).map((p) => ({ x: p.x, y: p.y })),
  }));
  const size = g.graph() as { width?: number; height?: number };
  return { width: Math.ceil(size.width ?? 0), height: Math.ceil(size.height ?? 0), nodes, edges };
}

/** Where a node's text starts, relative to its top-left corner. */
export const TEXT_INSET = { x: PAD_X, y: PAD_Y + FONT_SIZE } as const;
