import { Option, type Command } from 'commander';
import { printableJson } from '../../common/printable.js';
import { createEngine } from '../../engine/engine.js';
import { ToolchainError, type Diagnostic } from '../../common/errors.js';
import type { PluginStatus } from '../../plugins/types.js';
import { toAnthropicTools, toMcpTools, toOpenAITools, type ExportOptions } from '../../llm/index.js';
import { EXIT_OK, type CliIO } from '../io.js';
import type { CommandContext } from '../main.js';
import { showDiagnostic } from '../paths.js';

// `toolchain tools export --format openai|anthropic|mcp [--chains-only|--tools-only] [--strict]`
//: every tool and chain as function definitions, one JSON array on stdout, ready to
// paste into a request's `tools`. Plugins or chains that fail to load are left out, each with one
// warning line on stderr; the export itself still succeeds with what did load.

type Format = 'openai' | 'anthropic' | 'mcp';

interface ExportFlags {
  readonly format: Format;
  readonly chainsOnly: boolean;
  readonly toolsOnly: boolean;
  readonly strict: boolean;
}

export function registerTools(program: Command, ctx: CommandContext): void {
  const tools = program.command('tools').description('work with the tools and chains as a language model sees them');
  tools
    .command('export')
    .description('print every tool and chain as OpenAI, Anthropic or MCP tool definitions (JSON)')
    .addOption(new Option('--format <format>', 'the definitions format').choices(['openai', 'anthropic', 'mcp']).default('openai'))
    .option('--chains-only', 'only the chains', false)
    .option('--tools-only', 'only the tools', false)
    .option('--strict', 'OpenAI strict mode, for every schema that converts faithfully', false)
    .action(async (flags: ExportFlags) => {
      ctx.exit(await exportCommand(ctx, flags));
    });
}

async function exportCommand(ctx: CommandContext, flags: ExportFlags): Promise<number> {
  if (flags.chainsOnly && flags.toolsOnly) throw new ToolchainError('USAGE', '--chains-only and --tools-only exclude each other');
  if (flags.strict && flags.format !== 'openai') throw new ToolchainError('USAGE', '--strict applies to --format openai only');
  const globals = ctx.globals();
  // Nothing is called: compiling validators would only cost time.
  const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache() });
  try {
    warnAboutFailures(ctx.io, engine.diagnostics(), engine.plugins());
    const options: ExportOptions = { tools: !flags.chainsOnly, chains: !flags.toolsOnly };
    const definitions =
      flags.format === 'anthropic' ? toAnthropicTools(engine, options) : flags.format === 'mcp' ? toMcpTools(engine, options) : toOpenAITools(engine, { ...options, strict: flags.strict });
    ctx.io.stdout.write(`${printableJson(definitions, 2)}\n`);
    return EXIT_OK;
  } finally {
    await engine.close();
  }
}

function warnAboutFailures(io: CliIO, chainDiagnostics: readonly Diagnostic[], plugins: readonly PluginStatus[]): void {
  const lines: string[] = [];
  for (const d of chainDiagnostics) {
    if (d.severity === 'error') lines.push(showDiagnostic(io.cwd, d));
  }
  for (const p of plugins) {
    // One process, one load: a plugin is either active or left out (no stale versions here).
    if (p.status === 'active') continue;
    const first = p.diagnostics.find((d) => d.severity === 'error');
    lines.push(`plugin '${p.name}' is ${p.status}${first ? `: ${first.message}` : ''}`);
  }
  for (const line of lines) io.stderr.write(`warning: ${line} (left out of the export)\n`);
}
