import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { defineOwn } from '../../common/define-own.js';
import { ToolchainError } from '../../common/errors.js';
import { createEngine } from '../../engine/engine.js';
import type { CommandContext } from '../main.js';
import { openSession, type SessionFlags } from '../run-session.js';
import { collect, ISOLATION_HELP } from '../shared-options.js';
import { runStoreUrl } from '../store-url.js';

// `toolchain rerun RUN_ID [--from STEP] [--input KEY=VALUE]… [--allow-changed]`: a new run of
// a run that ended. With --from, that step and every step downstream of it run and the others
// keep their recorded outputs; without, every step runs again. Each --input replaces one key of
// the run's input: its value is read as JSON when it is JSON (`5`, `true`, `{"a":1}`, `"text"`),
// else taken as text. The new run's id is printed on stderr first, as `run` prints its own. With
// --queue the new run is recorded here and a worker of that queue executes it.

interface RerunFlags extends SessionFlags {
  readonly from?: string;
  readonly input: readonly string[];
  readonly allowChanged: boolean;
  readonly runId?: string;
  readonly store?: string;
  readonly queue?: string;
}

export function registerRerun(program: Command, ctx: CommandContext): void {
  program
    .command('rerun')
    .description('run a finished run again as a new run: from one step on (the others keep their recorded outputs), with inputs replaced')
    .argument('<run-id>', 'the run to re-run (toolchain runs lists them)')
    .option('--from <step>', 'run this step and everything downstream of it again; the other steps keep their recorded outputs (default: every step runs)')
    .option('--input <key=value>', 'replace one input of the run (repeatable); VALUE is read as JSON when it is JSON, else as text', collect, [])
    .option('--allow-changed', 're-run even if the chain file changed since the run ran', false)
    .option('--run-id <id>', "the new run's id (default: a new one)")
    .option('--json', 'print the whole result as one JSON object', false)
    .option('--approve <tool>', 'allow calls of this dangerous tool (repeatable)', collect, [])
    .option('--wait-approvals', "without a terminal: make other dangerous calls approval requests and wait for 'toolchain approvals' to decide them", false)
    .option('--store <url>', 'the run store (default: TOOLCHAIN_STORE, else sqlite:.toolchain/runs.db)')
    .option('--queue <url>', 'let the workers of this queue execute it (redis://HOST:PORT[/DB][?queue=NAME]); the store then defaults to that Redis')
    .option('--verbose', "show tools' ctx.log lines on stderr", false)
    .option('--isolation <level>', ISOLATION_HELP, 'none')
    .action(async (runId: string, flags: RerunFlags) => {
      const input = inputOverrides(flags.input);
      const globals = ctx.globals();
      const session = openSession(ctx.io, flags, globals);
      try {
        const logger = session.logger ? { logger: session.logger } : {};
        const store = runStoreUrl(flags.store, ctx.io, flags.queue);
        const queue = flags.queue !== undefined ? { queue: flags.queue } : {};
        const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache(), store, ...queue, isolation: session.isolation, ...logger });
        try {
          const newId = flags.runId ?? randomUUID();
          ctx.io.stderr.write(`re-running run ${runId}${flags.from !== undefined ? ` from step ${flags.from}` : ''}\nrun ${newId}\n`);
          const request = { runId: newId, allowChanged: flags.allowChanged, ...(flags.from !== undefined ? { from: flags.from } : {}), ...(flags.input.length > 0 ? { input } : {}) };
          ctx.exit(await session.run((options) => engine.rerun(runId, { ...options, ...request }), engine, flags.queue));
        } finally {
          await engine.close();
        }
      } finally {
        session.close();
      }
    });
}

/** `--input KEY=VALUE` pairs as one object: each value JSON when it parses, else the text; a key given twice is refused. */
export function inputOverrides(pairs: readonly string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ToolchainError('USAGE', `--input takes KEY=VALUE, got '${pair}'`);
    const key = pair.slice(0, eq);
    if (given.has(key)) throw new ToolchainError('USAGE', `--input ${key}= is given twice; give each input once`);
    given.add(key);
    const text = pair.slice(eq + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      // Not JSON: the text itself.
    }
    // `__proto__` stays an ordinary (and then rejected) key instead of a prototype change.
    defineOwn(input, key, value);
  }
  return input;
}
