import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { loadProject } from '../load-project.js';
import { findChain } from '../find-chain.js';
import { renderGraph, renderPng, renderSvg, type GraphFormat } from '../render-graph.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';

// `toolchain graph CHAIN`: the DAG as Mermaid or dot text, or drawn (svg, png) the way the
// inspector lays it out, so a chain can be looked at without a server. A PNG goes to --output,
// or to stdout only when stdout is not a terminal.

export function registerGraph(program: Command, ctx: CommandContext): void {
  program
    .command('graph')
    .description("print a chain's DAG as Mermaid, Graphviz dot, SVG or PNG")
    .argument('<chain>', 'chain name')
    .addOption(new Option('--format <format>', 'output format').choices(['mermaid', 'dot', 'svg', 'png']).default('mermaid'))
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (name: string, options: { format: GraphFormat | 'svg' | 'png'; output?: string }) => {
      const project = await loadProject(ctx.globals(), ctx.diskCache());
      const plan = findChain(project, name);
      let data: string | Uint8Array;
      if (options.format === 'png') {
        if (options.output === undefined && ctx.io.stdout.isTTY) throw new ToolchainError('USAGE', 'a PNG is not for a terminal: pass --output FILE, or redirect stdout');
        data = await renderPng(plan);
      } else if (options.format === 'svg') data = await renderSvg(plan);
      else data = renderGraph(plan, options.format);
      if (options.output !== undefined) await writeFile(resolve(ctx.io.cwd, options.output), data);
      else ctx.io.stdout.write(data);
      ctx.exit(EXIT_OK);
    });
}
