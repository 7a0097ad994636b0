import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { openUserCache, type DiskCache } from '../cache/index.js';
import { ToolchainError, formatDiagnostic } from '../common/errors.js';
import { packageVersion } from '../schemas/schema-files.js';
import { printable } from '../common/printable.js';
import { registerCommands } from './commands/index.js';
import { EXIT_RUN_FAILED, EXIT_USAGE, type CliIO, type GlobalOptions } from './io.js';

/** Handed to every command: the streams and the options every command shares. */
export interface CommandContext {
  readonly io: CliIO;
  globals(): GlobalOptions;
  /**
   * The per-user disk cache, opened on first use from the CLI's environment (TOOLCHAIN_CACHE_DIR,
   * XDG_CACHE_HOME, HOME); 'off' when disabled or refused (a refusal is one warning on stderr).
   */
  diskCache(): DiskCache | 'off';
  /** A command's action returns its exit code through this. */
  exit(code: number): void;
}

/** The CLI as a function: tests call it with their own streams; bin/toolchain.js with the process's. */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  let exitCode = 0;
  const program = new Command('toolchain')
    .description('Run declarative tool chains.')
    .version(packageVersion(), '-V, --version')
    .option('--chains <dir>', 'folder of chain files', 'chains')
    .option('--plugins <dir>', 'folder of plugin folders', 'plugins')
    .option('--debug', 'print stack traces', false)
    // A command's --help lists --chains, --plugins and --debug too.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  let diskCache: DiskCache | 'off' | undefined;
  const ctx: CommandContext = {
    io,
    diskCache: () => (diskCache ??= openUserCache({ env: io.env, onWarning: (m) => io.stderr.write(`warning: ${m}\n`) }) ?? 'off'),
    globals: () => {
      const o = program.opts<{ chains: string; plugins: string; debug: boolean }>();
      return { chains: resolve(io.cwd, o.chains), plugins: resolve(io.cwd, o.plugins), debug: o.debug };
    },
    exit: (code) => {
      exitCode = code;
    },
  };
  registerCommands(program, ctx);
  // Tools learn where the engine's own folders are from these (the files plugin's write_file
  // refuses to write into them): the folders this command really uses, not the defaults.
  program.hook('preAction', () => {
    const { chains, plugins } = ctx.globals();
    process.env.TOOLCHAIN_CHAINS_DIR = chains;
    process.env.TOOLCHAIN_PLUGINS_DIR = plugins;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const debug = argv.includes('--debug');
    if (err instanceof ToolchainError) {
      for (const d of err.diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
      if (!err.diagnostics.length) io.stderr.write(`${printable(`error: ${err.code} ${err.message}`)}\n`);
    } else {
      io.stderr.write(`${printable(`error: ${err instanceof Error ? err.message : String(err)}`)}\n`);
    }
    if (debug && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
    // A ToolchainError is something the user can fix (exit 2); anything else is our failure.
    return err instanceof ToolchainError ? EXIT_USAGE : EXIT_RUN_FAILED;
  }
}
