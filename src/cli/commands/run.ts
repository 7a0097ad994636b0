import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { createEngine } from '../../engine/engine.js';
import { ToolchainError } from '../../common/errors.js';
import { EXIT_OK } from '../io.js';
import type { RunOptions } from '../../executor/index.js';
import type { RunResult } from '../../run-model/result.js';
import type { CommandContext } from '../main.js';
import { readInput, type InputFlags } from '../run-input.js';
import { checkedMocks, parseMocks } from '../run-mocks.js';
import { openSession, type SessionFlags } from '../run-session.js';
import { collect, ISOLATION_HELP } from '../shared-options.js';
import { runStoreUrl } from '../store-url.js';
import { openOnFirstUse } from '../../store/lazy-store.js';
import { openStore } from '../../store/open-store.js';

// `toolchain run CHAIN`: inputs from --input-file, then --input-json, then each
// --input KEY=VALUE (the later source wins; run-input.ts); outputs as JSON on stdout (or the whole
// result with --json); live progress on stderr only when it is a terminal; exit 0 / 1 (the run
// failed) / 2 (bad usage, bad input, unknown or invalid chain, a tool that is not installed). The run is
// recorded in the run store, and its id is printed on stderr first, so that it can be resumed.
// `--mock STEP=JSON` makes a dry run: those steps return the JSON and never call their tools.

interface RunFlags extends InputFlags, SessionFlags {
  readonly concurrency?: string;
  readonly runId?: string;
  readonly store?: string;
  readonly mock: string[];
  readonly queue?: string;
  readonly wait: boolean;
}

export function registerRun(program: Command, ctx: CommandContext): void {
  program
    .command('run')
    .description('run a chain and print its outputs as JSON')
    .argument('<chain>', 'the chain to run')
    .option('--input <key=value>', 'one input (repeatable, each key once; over --input-json and --input-file); strings are coerced to the type the chain declares', collect, [])
    .option('--input-json <json>', 'inputs as one JSON object (over --input-file)')
    .option('--input-file <file>', 'inputs from a JSON file, or - for standard input')
    .option('--json', 'print the whole result as one JSON object', false)
    .option('--approve <tool>', 'allow calls of this dangerous tool (repeatable)', collect, [])
    .option('--wait-approvals', "without a terminal: make other dangerous calls approval requests and wait for 'toolchain approvals' to decide them", false)
    .option('--concurrency <n>', 'at most this many steps at once')
    .option('--run-id <id>', 'the run\'s id: its idempotency key (a finished run with this id is answered from the store)')
    .option('--store <url>', 'where runs are recorded: sqlite:FILE, postgres://…, redis://…, memory: (default: TOOLCHAIN_STORE, else sqlite:.toolchain/runs.db)')
    .option('--queue <url>', 'let the workers of this queue execute it (redis://HOST:PORT[/DB][?queue=NAME]); the store then defaults to that Redis')
    .option('--no-wait', 'with --queue: print the run id once it is enqueued, and exit')
    .option('--verbose', "show tools' ctx.log lines on stderr", false)
    .option('--mock <step=json>', 'dry run: step STEP returns this JSON instead of calling its tool (repeatable; `sub›step` for a sub-chain step)', collect, [])
    .option('--isolation <level>', ISOLATION_HELP, 'none')
    .action(async (chain: string, flags: RunFlags) => {
      ctx.exit(await runCommand(ctx, chain, flags));
    });
}

async function runCommand(ctx: CommandContext, chainName: string, flags: RunFlags): Promise<number> {
  const { io } = ctx;
  const globals = ctx.globals();
  const concurrency = flags.concurrency === undefined ? undefined : Number(flags.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new ToolchainError('USAGE', `--concurrency must be a whole number of at least 1, got '${flags.concurrency}'`);
  }
  const mocks = parseMocks(flags.mock);
  if (mocks && flags.queue !== undefined) throw new ToolchainError('USAGE', '--mock makes a dry run in this process; it cannot go with --queue');
  if (concurrency !== undefined && flags.queue !== undefined) throw new ToolchainError('USAGE', "--concurrency limits steps in this process; with --queue the chain's own concurrency applies on the workers");
  const session = openSession(io, flags, globals);
  const storeAt = runStoreUrl(flags.store, io, flags.queue);
  // An SQLite store whose folder does not exist yet is opened when the run first writes (opening
  // creates the folder): a refused run leaves no .toolchain/ behind. One that exists opens at once,
  // so that a file that is no store is reported before anything runs.
  const store = storeAt?.startsWith('sqlite:') && !existsSync(dirname(resolve(io.cwd, storeAt.slice('sqlite:'.length)))) ? openOnFirstUse(storeAt, () => openStore(storeAt)) : storeAt;
  try {
    // One run calls a few of the installed tools: compile their validators and import their
    // handlers on first use only.
    const engine = await createEngine({
      chainsDir: globals.chains,
      pluginsDir: globals.plugins,
      load: 'lazy',
      cache: ctx.diskCache(),
      store,
      ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
      isolation: session.isolation,
      ...(session.logger ? { logger: session.logger } : {}),
    });
    try {
      const mocked = mocks === undefined ? undefined : checkedMocks(io, mocks, chainName, engine);
      const input = await readInput(io, flags, engine.chain(chainName));
      const runId = flags.runId ?? randomUUID();
      if (flags.queue !== undefined && !flags.wait) {
        const submitted = await engine.submit(chainName, input, { runId });
        io.stdout.write(`${submitted.runId}\n`);
        return EXIT_OK;
      }
      if (!flags.wait) throw new ToolchainError('USAGE', '--no-wait needs --queue: a local run ends with this process');
      const start = (options: RunOptions): Promise<RunResult> => {
        io.stderr.write(`run ${runId}\n`);
        return engine.run(chainName, input, { ...options, runId, ...(concurrency !== undefined ? { concurrency } : {}), ...(mocked ? { mocks: mocked } : {}) });
      };
      return await session.run(start, engine, flags.queue);
    } finally {
      await engine.close();
    }
  } finally {
    if (typeof store === 'object') await store.close();
    session.close();
  }
}
