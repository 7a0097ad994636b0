import { resolve } from 'node:path';
import type { Command } from 'commander';
import { formatDiagnostic, hasErrors, type Diagnostic } from '../../errors.js';
import { loadProject } from '../load-project.js';
import { EXIT_OK, EXIT_USAGE } from '../io.js';
import type { CommandContext } from '../main.js';
import { relativeTo } from '../paths.js';

export function registerValidate(program: Command, ctx: CommandContext): void {
  program
    .command('validate')
    .description('check every chain (or the files named) and print each problem as FILE:LINE:COL CODE message')
    .argument('[files...]', 'chain files to check; default: every chain in --chains')
    .action(async (files: string[]) => {
      const globals = ctx.globals();
      const project = await loadProject(globals, files.map((f) => resolve(ctx.io.cwd, f)));
      const named = new Set(files.map((f) => relativeTo(ctx.io.cwd, f)));
      let problems: Diagnostic[] = [...project.readProblems, ...project.chains.diagnostics];
      // With files named, the folder is only context (sub-chains, duplicate names): report the named files.
      if (files.length) problems = problems.filter((d) => d.file !== undefined && named.has(relativeTo(ctx.io.cwd, d.file)));
      problems.sort(byPosition);
      for (const d of problems) ctx.io.stdout.write(`${formatDiagnostic({ ...d, ...(d.file ? { file: relativeTo(ctx.io.cwd, d.file) } : {}) })}\n`);
      const checked = files.length || project.chains.files.length;
      if (hasErrors(problems)) {
        ctx.io.stderr.write(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${checked} file${checked === 1 ? '' : 's'}\n`);
        ctx.exit(EXIT_USAGE);
      } else {
        ctx.io.stderr.write(`ok: ${checked} chain file${checked === 1 ? '' : 's'} valid\n`);
        ctx.exit(EXIT_OK);
      }
    });
}

function byPosition(a: Diagnostic, b: Diagnostic): number {
  return (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0);
}
