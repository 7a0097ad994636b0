import type { Command } from 'commander';
import { createEngine, type ChainsReloadedEvent } from '../../engine/engine.js';
import type { Diagnostic } from '../../common/errors.js';
import type { PluginEvent } from '../../plugins/index.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { missingFolders, relativeTo, showDiagnostic } from '../paths.js';
import type { LogEntry } from '../../run-model/events.js';
import { printable } from '../../common/printable.js';
import type { RecoveryEvent } from '../../runs/recovery.js';
import { describeRecovery, RECOVER_HELP } from '../shared-options.js';
import { DEFAULT_STORE, storeUrl } from '../store-url.js';
import { describeTriggerEvent } from '../../triggers/event-text.js';

// `toolchain watch`: an engine that stays up and reloads plugins and chains as their files
// change, printing one line per reload and one per problem, until interrupted. On its store it
// resumes interrupted runs and wakes waiting runs whose wait is over (not with --no-recover,
// which leaves the store alone).

export function registerWatch(program: Command, ctx: CommandContext): void {
  program
    .command('watch')
    .description('keep an engine running, reload plugins and chains as they change, and print each reload and error')
    .option('--verbose', "show tools' ctx.log lines", false)
    .option('--store <url>', `the run store whose interrupted runs it resumes and whose waiting runs it wakes (default: env TOOLCHAIN_STORE, else ${DEFAULT_STORE})`)
    .option('--no-recover', RECOVER_HELP)
    .action(async (flags: { verbose: boolean; store?: string; recover: boolean }) => {
      const { io } = ctx;
      const globals = ctx.globals();
      const say = (line: string): void => void io.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
      const problems = (ds: readonly Diagnostic[]): void => {
        for (const d of ds) say(`  ${showDiagnostic(io.cwd, d)}`);
      };
      const engine = await createEngine({
        chainsDir: globals.chains,
        pluginsDir: globals.plugins,
        watch: true,
        // Waiting runs on its store whose wait is over are continued here.
        timers: true,
        // The chains' triggers start their runs here (one run per tick across every process on the store).
        triggers: true,
        onTrigger: (e) => say(printable(describeTriggerEvent(e))),
        cache: ctx.diskCache(),
        ...(flags.recover ? { store: storeUrl(flags.store, io), recover: true, onRecovery: (e: RecoveryEvent) => say(printable(describeRecovery(e))) } : {}),
        ...(flags.verbose ? { logger: (e: LogEntry) => say(printable(`[${e.step}${e.item !== undefined ? `[${e.item}]` : ''}] ${e.message}${e.fields ? ` ${JSON.stringify(e.fields)}` : ''}`)) } : {}),
        onPluginEvent: (e) => {
          say(describePlugin(e, relativeTo(io.cwd, e.dir)));
          problems(e.diagnostics ?? []);
        },
        onChainsReloaded: (e: ChainsReloadedEvent) => {
          // A chain whose file now has errors keeps its last good version: say so, not "reloaded".
          const broken = new Set(e.diagnostics.filter((d) => d.severity === 'error').map((d) => d.file));
          const errors = e.diagnostics.filter((d) => d.severity === 'error').length;
          say(errors ? `chains: ${errors} problem${errors === 1 ? '' : 's'} in ${broken.size} file${broken.size === 1 ? '' : 's'}; the last good versions keep serving (runnable: ${e.chains.join(', ') || 'none'})` : `chains reloaded: ${e.chains.length ? e.chains.join(', ') : 'none runnable'}`);
          problems(e.diagnostics);
        },
      });
      const plugins = engine.plugins();
      const chainCount = engine.chains().length;
      say(`watching ${relativeTo(io.cwd, globals.plugins)} (${plugins.length} plugin${plugins.length === 1 ? '' : 's'}) and ${relativeTo(io.cwd, globals.chains)} (${chainCount} chain${chainCount === 1 ? '' : 's'}); Ctrl-C stops`);
      for (const missing of await missingFolders(globals)) say(`warning: ${relativeTo(io.cwd, missing)} does not exist (yet)`);
      problems(engine.diagnostics());
      // Tool names two plugins share (NAME_COLLISION): which one the bare name means.
      problems(engine.tools().warnings);
      await untilInterrupted();
      await engine.close();
      say('stopped');
      ctx.exit(EXIT_OK);
    });
}

/** One line per plugin event, naming the folder too: two folders may declare one plugin name. */
function describePlugin(e: PluginEvent, folder: string): string {
  const who = `plugin ${e.plugin}${e.version && e.type !== 'plugin:error' ? ` ${e.version}` : ''} (${folder})`;
  switch (e.type) {
    case 'plugin:loaded':
      return `${who} loaded`;
    case 'plugin:error':
      return `${who} failed to load${e.version ? `; version ${e.version} keeps serving` : ''}`;
    case 'plugin:inactive':
      return `${who} inactive`;
    case 'plugin:removed':
      return `${who} removed`;
  }
}

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
