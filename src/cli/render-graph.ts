import type { ChainPlan, PlanStep } from '../compiler/index.js';

// Text renderings of a compiled chain's DAG. Edges from references and depends_on are solid;
// edges that exist only because of order in the file are dashed, since they carry no data and
// do not propagate a skip.

export type GraphFormat = 'mermaid' | 'dot';

export function renderGraph(plan: ChainPlan, format: GraphFormat): string {
  return format === 'mermaid' ? mermaid(plan) : dot(plan);
}

function label(step: PlanStep): string {
  const parts = [step.name, step.label];
  if (step.forEach) parts.push(`for each ${step.forEach.items.source}`);
  if (step.when) parts.push(`when ${step.when.source}`);
  return parts.join('\\n');
}

function edges(plan: ChainPlan): { from: PlanStep; to: PlanStep; data: boolean }[] {
  return plan.steps.flatMap((to) =>
    to.waitsFor.map((i) => ({ from: plan.steps[i]!, to, data: to.skipsWith.includes(i) })),
  );
}

function mermaid(plan: ChainPlan): string {
  const esc = (s: string): string => s.replace(/"/g, '#quot;').replace(/\\n/g, '<br/>');
  const lines = ['flowchart TD'];
  for (const s of plan.steps) lines.push(`  ${s.name}["${esc(label(s))}"]`);
  for (const e of edges(plan)) lines.push(`  ${e.from.name} ${e.data ? '-->' : '-.->'} ${e.to.name}`);
  return `${lines.join('\n')}\n`;
}

function dot(plan: ChainPlan): string {
  const q = (s: string): string => `"${s.replace(/"/g, '\\"')}"`;
  const lines = [`digraph ${q(plan.name)} {`, '  rankdir=TB;', '  node [shape=box, fontname="Helvetica"];'];
  for (const s of plan.steps) lines.push(`  ${q(s.name)} [label=${q(label(s))}];`);
  for (const e of edges(plan)) lines.push(`  ${q(e.from.name)} -> ${q(e.to.name)}${e.data ? '' : ' [style=dashed]'};`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
