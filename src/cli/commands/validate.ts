import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { hasErrors, type Diagnostic } from '../../common/errors.js';
import { isManifest, loadProject } from '../load-project.js';
import { EXIT_OK, EXIT_USAGE } from '../io.js';
import type { CommandContext } from '../main.js';
import { missingFolders, relativeTo, showDiagnostic } from '../paths.js';
import { missingSecrets } from '../../triggers/webhook-secrets.js';

export function registerValidate(program: Command, ctx: CommandContext): void {
  program
    .command('validate')
    .description('check every chain and plugin (or the files named) and print each problem as FILE:LINE:COL CODE message')
    .argument('[files...]', 'chain files or plugin.yaml manifests to check; default: everything in --chains and --plugins')
    .action(async (files: string[]) => {
      const globals = ctx.globals();
      const named = files.map((f) => resolve(ctx.io.cwd, f));
      // A manifest named on the command line is checked as part of its plugins folder.
      const pluginsDir = named.filter(isManifest).map((f) => dirname(dirname(f)))[0] ?? globals.plugins;
      const project = await loadProject({ ...globals, plugins: pluginsDir }, ctx.diskCache(), named);
      let problems: Diagnostic[] = [
        ...project.readProblems,
        ...project.plugins.plugins.flatMap((p) => p.diagnostics),
        ...project.chains.diagnostics,
        // Where serve would run with this environment, a webhook without its secret refuses every delivery.
        ...missingSecrets(project.chains.plans.values(), ctx.io.env),
      ];
      // With files named, the folders are only context (tools, sub-chains, duplicate names).
      if (named.length) {
        const wanted = new Set(named);
        problems = problems.filter((d) => d.file !== undefined && wanted.has(resolve(ctx.io.cwd, d.file)));
      }
      problems.sort(byPosition);
      for (const d of problems) ctx.io.stdout.write(`${showDiagnostic(ctx.io.cwd, d)}\n`);
      const chainCount = named.length ? named.filter((f) => !isManifest(f)).length : project.chains.files.length;
      const pluginCount = named.length ? named.filter(isManifest).length : project.plugins.plugins.length;
      const what = `${plural(chainCount, 'chain')} and ${plural(pluginCount, 'plugin')}`;
      const errors = problems.filter((d) => d.severity === 'error').length;
      if (!named.length) {
        for (const dir of await missingFolders(globals)) ctx.io.stderr.write(`warning: ${relativeTo(ctx.io.cwd, dir)} does not exist: nothing there was checked\n`);
      }
      if (hasErrors(problems)) {
        // The files that have problems, out of those checked.
        const withErrors = new Set(problems.filter((d) => d.severity === 'error').map((d) => d.file)).size;
        ctx.io.stderr.write(`${plural(errors, 'problem')} in ${plural(withErrors, 'file')} (of ${what} checked)\n`);
        ctx.exit(EXIT_USAGE);
      } else {
        ctx.io.stderr.write(`ok: ${what} valid\n`);
        ctx.exit(EXIT_OK);
      }
    });
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function byPosition(a: Diagnostic, b: Diagnostic): number {
  return (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0);
}
