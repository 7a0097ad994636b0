import type { ChainPlan } from '../compiler/plan.js';
import { chainGraph } from './chain-graph.js';
import { FONT_SIZE, LINE_HEIGHT, TEXT_INSET, layoutGraph } from './layout-graph.js';

// `toolchain graph CHAIN --format svg`: the DAG as a standalone SVG document, laid out like the
// inspector draws it. Only static markup: no script, no external font or stylesheet.

const escapeXml = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderSvg(plan: ChainPlan): string {
  const layout = layoutGraph(chainGraph(plan));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="${FONT_SIZE}">`,
    `<title>${escapeXml(plan.name)}</title>`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#555"/></marker></defs>',
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
  ];
  for (const { edge, points } of layout.edges) {
    const d = points.map((p, k) => `${k === 0 ? 'M' : 'L'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join('');
    out.push(`<path d="${d}" fill="none" stroke="#555" stroke-width="1.3"${edge.data ? '' : ' stroke-dasharray="5 4"'} marker-end="url(#arrow)"/>`);
  }
  for (const n of layout.nodes) {
    const fill = n.node.kind === 'chain' ? '#eef3ff' : n.node.kind === 'agent' ? '#f6efff' : n.node.kind === 'wait' ? '#fff6e5' : '#f7f7f7';
    out.push(`<g><rect x="${n.x}" y="${n.y}" width="${n.width}" height="${n.height}" rx="6" fill="${fill}" stroke="#444"/>`);
    n.lines.forEach((line, k) => {
      const weight = k === 0 ? ' font-weight="bold"' : ' fill="#444"';
      out.push(`<text x="${n.x + TEXT_INSET.x}" y="${n.y + TEXT_INSET.y + k * LINE_HEIGHT}"${weight}>${escapeXml(line)}</text>`);
    });
    out.push('</g>');
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
