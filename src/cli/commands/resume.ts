import type { Command } from 'commander';
import { createEngine } from '../../engine/engine.js';
import type { CommandContext } from '../main.js';
import { openSession, type SessionFlags } from '../run-session.js';
import { collect, ISOLATION_HELP } from '../shared-options.js';
import { runStoreUrl } from '../store-url.js';

// `toolchain resume RUN_ID`: continues a run cut short (crash, kill, cancel) or
// failed (redrive). Steps with a recorded success are not run again; their outputs feed the rest.

interface ResumeFlags extends SessionFlags {
  readonly allowChanged: boolean;
  readonly store?: string;
  readonly queue?: string;
}

export function registerResume(program: Command, ctx: CommandContext): void {
  program
    .command('resume')
    .description('continue a run that was cut short or failed; recorded successes are not run again')
    .argument('<run-id>', 'the run to continue (toolchain runs lists them)')
    .option('--allow-changed', 'continue even if the chain file changed since the run started', false)
    .option('--json', 'print the whole result as one JSON object', false)
    .option('--approve <tool>', 'allow calls of this dangerous tool (repeatable)', collect, [])
    .option('--wait-approvals', "without a terminal: make other dangerous calls approval requests and wait for 'toolchain approvals' to decide them", false)
    .option('--store <url>', 'the run store (default: TOOLCHAIN_STORE, else sqlite:.toolchain/runs.db)')
    .option('--queue <url>', 'let the workers of this queue continue it (the store then defaults to that Redis)')
    .option('--verbose', "show tools' ctx.log lines on stderr", false)
    .option('--isolation <level>', ISOLATION_HELP, 'none')
    .action(async (runId: string, flags: ResumeFlags) => {
      const globals = ctx.globals();
      const session = openSession(ctx.io, flags, globals);
      try {
        const logger = session.logger ? { logger: session.logger } : {};
        const store = runStoreUrl(flags.store, ctx.io, flags.queue);
        const queue = flags.queue !== undefined ? { queue: flags.queue } : {};
        const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache(), store, ...queue, isolation: session.isolation, ...logger });
        try {
          ctx.io.stderr.write(`resuming run ${runId}\n`);
          ctx.exit(await session.run((options) => engine.resume(runId, { ...options, allowChanged: flags.allowChanged }), engine, flags.queue));
        } finally {
          await engine.close();
        }
      } finally {
        session.close();
      }
    });
}
