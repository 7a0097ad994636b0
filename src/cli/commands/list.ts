import { Argument, type Command } from 'commander';
import { loadProject } from '../load-project.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { relativeTo } from '../paths.js';

export function registerList(program: Command, ctx: CommandContext): void {
  program
    .command('list')
    .description('list chains')
    .addArgument(new Argument('<what>', 'what to list').choices(['chains']))
    .option('--json', 'print JSON', false)
    .action(async (_what: string, options: { json: boolean }) => {
      const project = await loadProject(ctx.globals());
      const rows = project.chains.files.map((f) => {
        const plan = f.name ? project.chains.plans.get(f.name) : undefined;
        const problems = project.chains.diagnostics.filter((d) => d.file === f.file).length;
        return {
          name: f.name ?? null,
          file: relativeTo(ctx.io.cwd, f.file),
          status: plan ? 'ok' : 'invalid',
          description: plan?.description ?? null,
          inputs: plan?.inputs.names ?? [],
          steps: plan?.steps.length ?? null,
          problems,
        };
      });
      if (options.json) ctx.io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else {
        for (const r of rows) {
          const status = r.status === 'ok' ? `${r.steps} steps` : `invalid (${r.problems} problem${r.problems === 1 ? '' : 's'}; run toolchain validate)`;
          ctx.io.stdout.write(`${(r.name ?? '?').padEnd(24)} ${status.padEnd(14)} ${r.description ?? r.file}\n`);
        }
      }
      ctx.exit(EXIT_OK);
    });
}
