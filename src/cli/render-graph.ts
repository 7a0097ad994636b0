import type { ChainPlan } from '../compiler/index.js';
import { chainGraph, nodeLines, type GraphNode } from '../graph/chain-graph.js';
import { importOptional } from '../common/optional-package.js';

// Renderings of a compiled chain's DAG. Edges from references and depends_on are solid;
// edges that exist only because of order in the file are dashed, since they carry no data and
// do not propagate a skip.

export type GraphFormat = 'mermaid' | 'dot';

export function renderGraph(plan: ChainPlan, format: GraphFormat): string {
  return format === 'mermaid' ? mermaid(plan) : dot(plan);
}

/**
 * The DAG drawn as SVG, laid out by dagre. The layout module loads on first use (in the CLI
 * bundle, a relative dynamic import stays in the bundle but runs only when called), so commands
 * that draw nothing do not load dagre.
 */
export async function renderSvg(plan: ChainPlan): Promise<string> {
  const { renderSvg: render } = await import('../graph/render-svg.js');
  return render(plan);
}

/** The SVG drawing as a PNG at twice its size, by resvg (loaded only for this). */
export async function renderPng(plan: ChainPlan): Promise<Uint8Array> {
  const { Resvg } = await importOptional<typeof import('@resvg/resvg-js')>('@resvg/resvg-js');
  const resvg = new Resvg(await renderSvg(plan), { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono' } });
  return resvg.render().asPng();
}

const label = (node: GraphNode): string => nodeLines(node).join('\\n');

function mermaid(plan: ChainPlan): string {
  const esc = (s: string): string => s.replace(/"/g, '#quot;').replace(/\\n/g, '<br/>');
  const { nodes, edges } = chainGraph(plan);
  const lines = ['flowchart TD'];
  for (const n of nodes) lines.push(`  ${n.id}["${esc(label(n))}"]`);
  for (const e of edges) lines.push(`  ${e.from} ${e.data ? '-->' : '-.->'} ${e.to}`);
  return `${lines.join('\n')}\n`;
}

function dot(plan: ChainPlan): string {
  const q = (s: string): string => `"${s.replace(/"/g, '\\"')}"`;
  const { nodes, edges } = chainGraph(plan);
  const lines = [`digraph ${q(plan.name)} {`, '  rankdir=TB;', '  node [shape=box, fontname="Helvetica"];'];
  for (const n of nodes) lines.push(`  ${q(n.id)} [label=${q(label(n))}];`);
  for (const e of edges) lines.push(`  ${q(e.from)} -> ${q(e.to)}${e.data ? '' : ' [style=dashed]'};`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
