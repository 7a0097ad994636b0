import { Option, type Command } from 'commander';
import { loadProject } from '../load-project.js';
import { findChain } from '../find-chain.js';
import { renderGraph, type GraphFormat } from '../render-graph.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';

export function registerGraph(program: Command, ctx: CommandContext): void {
  program
    .command('graph')
    .description("print a chain's DAG as Mermaid or Graphviz dot")
    .argument('<chain>', 'chain name')
    .addOption(new Option('--format <format>', 'output format').choices(['mermaid', 'dot']).default('mermaid'))
    .action(async (name: string, options: { format: GraphFormat }) => {
      const project = await loadProject(ctx.globals(), ctx.diskCache());
      ctx.io.stdout.write(renderGraph(findChain(project, name), options.format));
      ctx.exit(EXIT_OK);
    });
}
