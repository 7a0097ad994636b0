import { Argument, type Command } from 'commander';
import { printableJson, printableLines } from '../../common/printable.js';
import { firstSentence } from '../first-sentence.js';
import { loadProject, type Project } from '../load-project.js';
import { EXIT_OK, type CliIO } from '../io.js';
import type { CommandContext } from '../main.js';
import { missingFolders, relativeTo, showDiagnostic } from '../paths.js';

// `toolchain list chains|tools|plugins`: what the project holds, each with its status, as a
// table or as JSON.

type What = 'chains' | 'tools' | 'plugins';

export function registerList(program: Command, ctx: CommandContext): void {
  program
    .command('list')
    .description('list chains, tools or plugins, with their status')
    .addArgument(new Argument('<what>', 'what to list').choices(['chains', 'tools', 'plugins']))
    .option('--json', 'print JSON', false)
    .action(async (what: What, options: { json: boolean }) => {
      const project = await loadProject(ctx.globals(), ctx.diskCache());
      const rows = ROWS[what](project, ctx.io);
      const folder = what === 'chains' ? ctx.globals().chains : ctx.globals().plugins;
      if ((await missingFolders(ctx.globals())).includes(folder)) ctx.io.stderr.write(`no ${what === 'chains' ? 'chains' : 'plugins'} folder: ${relativeTo(ctx.io.cwd, folder)} does not exist (--${what === 'chains' ? 'chains' : 'plugins'} DIR names another)\n`);
      if (options.json) ctx.io.stdout.write(`${printableJson(rows, 2)}\n`);
      // A row's own line breaks (a plugin's problems under it) stay line breaks.
      else for (const r of rows) ctx.io.stdout.write(`${printableLines(TEXT[what](r as never))}\n`);
      ctx.exit(EXIT_OK);
    });
}

function chainRows(project: Project, io: CliIO) {
  return project.chains.files.map((f) => {
    const plan = f.name ? project.chains.plans.get(f.name) : undefined;
    const problems = project.chains.diagnostics.filter((d) => d.file === f.file).length;
    return {
      name: f.name ?? null,
      file: relativeTo(io.cwd, f.file),
      status: plan ? 'ok' : 'invalid',
      description: plan?.description ?? null,
      inputs: plan?.inputs.names ?? [],
      steps: plan?.steps.length ?? null,
      problems,
    };
  });
}

function pluginRows(project: Project, io: CliIO) {
  return project.plugins.plugins.map((p) => ({
    name: p.name,
    version: p.version ?? null,
    dir: relativeTo(io.cwd, p.dir),
    status: p.status,
    tools: p.tools.map((t) => t.name),
    failed_tools: p.failedTools.map((t) => t.name),
    errors: p.diagnostics.map((d) => showDiagnostic(io.cwd, d)),
  }));
}

function toolRows(project: Project) {
  return project.plugins.plugins.flatMap((p) => [
    ...p.tools.map((t) => ({ name: t.name, plugin: p.name, version: p.version ?? null, status: p.status === 'partial' ? 'ok' : p.status, dangerous: t.dangerous, description: t.description })),
    // Declared, but its handler does not load: listed, with why.
    ...p.failedTools.map((t) => ({ name: t.name, plugin: p.name, version: p.version ?? null, status: 'error', dangerous: false, description: t.reason })),
  ]);
}

const ROWS = { chains: chainRows, plugins: pluginRows, tools: toolRows } as const;

const TEXT = {
  chains: (r: ReturnType<typeof chainRows>[number]) => {
    const status = r.status === 'ok' ? `${r.steps} steps` : `invalid (${r.problems} problem${r.problems === 1 ? '' : 's'}; run toolchain validate)`;
    return `${(r.name ?? '?').padEnd(24)} ${status.padEnd(14)} ${r.description ?? r.file}`;
  },
  plugins: (r: ReturnType<typeof pluginRows>[number]) =>
    `${r.name.padEnd(16)} ${(r.version ?? '-').padEnd(9)} ${r.status.padEnd(9)} ${[...r.tools, ...r.failed_tools.map((t) => `${t} (does not load)`)].join(', ')}${r.errors.length ? `\n  ${r.errors.join('\n  ')}` : ''}`,
  tools: (r: ReturnType<typeof toolRows>[number]) =>
    `${`${r.plugin}/${r.name}`.padEnd(28)} ${r.status === 'ok' ? '' : `(${r.status}) `}${r.dangerous ? '[dangerous] ' : ''}${firstSentence(r.description)}`,
};
