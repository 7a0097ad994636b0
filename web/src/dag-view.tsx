import { useMemo } from 'preact/hooks';
import { FONT_SIZE, LINE_HEIGHT, TEXT_INSET, layoutGraph } from '../../src/graph/layout-graph.js';
import type { ChainGraph } from './api.js';

// The chain's DAG, laid out by dagre once per chain (the same layout as `toolchain graph
// --format svg`), each node filled by its step's status. Nodes are buttons: Tab reaches them,
// Enter or Space selects one. Dashed edges come from file order alone.

export function DagView({ graph, statuses, selected, onSelect }: { graph: ChainGraph; statuses: Record<string, string>; selected: string | undefined; onSelect: (step: string) => void }) {
  const layout = useMemo(() => layoutGraph(graph, 8), [graph]);
  return (
    <div class="dag-scroll">
      <svg class="dag" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="group" aria-label="Steps of the chain">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0 0L10 5L0 10z" class="arrow-head" />
          </marker>
        </defs>
        {layout.edges.map(({ edge, points }) => (
          <path
            key={`${edge.from}>${edge.to}`}
            class={`edge${edge.data ? '' : ' order'}`}
            d={points.map((p, k) => `${k === 0 ? 'M' : 'L'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join('')}
            marker-end="url(#arrow)"
          />
        ))}
        {layout.nodes.map((n) => {
          const status = statuses[n.node.id] ?? 'pending';
          const select = (): void => onSelect(n.node.id);
          return (
            <g
              key={n.node.id}
              class={`node status-${status}${selected === n.node.id ? ' selected' : ''}`}
              data-step={n.node.id}
              data-status={status}
              role="button"
              tabindex={0}
              aria-pressed={selected === n.node.id}
              aria-label={`step ${n.node.id}, ${status}`}
              onClick={select}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  select();
                }
              }}
            >
              <rect x={n.x} y={n.y} width={n.width} height={n.height} rx={6} />
              {n.lines.map((line, k) => (
                <text x={n.x + TEXT_INSET.x} y={n.y + TEXT_INSET.y + k * LINE_HEIGHT} font-size={FONT_SIZE} class={k === 0 ? 'name' : 'sub'}>
                  {line}
                </text>
              ))}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
