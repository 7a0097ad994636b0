import type { Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { durationFlag as duration } from '../duration-flag.js';
import { createWorker } from '../../engine/worker.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { showDiagnostic } from '../paths.js';
import { guardProcess } from '../process-guard.js';
import { ISOLATION_HELP, isolationFlag } from '../shared-options.js';
import { storeUrl } from '../store-url.js';
import { printable } from '../../common/printable.js';
import { describeTriggerEvent } from '../../triggers/event-text.js';

// `toolchain worker --queue redis://…`: executes the queue's runs with this folder's
// chains and plugins (reloaded when they change), recording them in the shared store. SIGTERM or
// SIGINT: no new runs; those executing get --grace to finish, then are released to other workers
// (the process exits, its locks lapse, another worker resumes them). A second signal exits at once.

interface WorkerFlags {
  readonly queue: string;
  readonly concurrency: string;
  readonly store?: string;
  readonly grace: string;
  readonly stalledInterval: string;
  readonly reconcileInterval: string;
  readonly watch: boolean;
  readonly isolation: string;
  readonly recover: boolean;
  readonly forEachElements?: string;
}

export function registerWorker(program: Command, ctx: CommandContext): void {
  program
    .command('worker')
    .description('execute the runs of a queue (BullMQ on Redis) with this folder\'s chains and plugins')
    .requiredOption('--queue <url>', 'the queue: redis://HOST:PORT[/DB][?queue=NAME]')
    .option('--concurrency <n>', 'runs executing at once in this worker', '8')
    .option('--for-each-elements <n>', 'the most elements one for_each may have; a step over more fails FOR_EACH_TOO_LARGE (default: no limit; set it when others submit the inputs, as serve does)')
    .option('--store <url>', 'the shared run store (default: TOOLCHAIN_STORE, else the queue\'s Redis; postgres://… outlives Redis)')
    .option('--grace <duration>', 'on SIGTERM/SIGINT, how long runs executing may take before they are released to other workers', '30s')
    .option('--stalled-interval <duration>', 'BullMQ\'s check for jobs whose worker died (its lock\'s lifetime and the check\'s period); a run whose owner the store shows gone is taken over within a second', '30s')
    .option('--reconcile-interval <duration>', 'how often running runs whose job Redis lost are enqueued again', '30s')
    .option('--no-watch', 'do not reload plugins and chains when their files change')
    .option('--isolation <level>', ISOLATION_HELP, 'none')
    .option('--no-recover', "do not enqueue again the queue's running runs whose job was lost (a dead worker's runs still go to live workers)")
    .action(async (flags: WorkerFlags) => {
      ctx.exit(await work(ctx, flags));
    });
}

async function work(ctx: CommandContext, flags: WorkerFlags): Promise<number> {
  const { io } = ctx;
  const globals = ctx.globals();
  const concurrency = Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ToolchainError('USAGE', `--concurrency must be a whole number of at least 1, got '${flags.concurrency}'`);
  const forEach = flags.forEachElements === undefined ? undefined : Number(flags.forEachElements);
  if (forEach !== undefined && (!Number.isInteger(forEach) || forEach < 1)) throw new ToolchainError('USAGE', `--for-each-elements must be a whole number of at least 1, got '${flags.forEachElements}'`);
  const graceMs = duration('grace', flags.grace, true);
  const say = (line: string): void => void io.stderr.write(`toolchain worker: ${line}\n`);
  // The real exit: while the worker runs plugin code, process.exit is guarded (process-guard.ts).
  const exitNow = process.exit.bind(process);
  const worker = await createWorker({
    queue: flags.queue,
    // --store, else TOOLCHAIN_STORE, else the queue's Redis (not the CLI's SQLite file: workers share their store).
    ...(flags.store ?? io.env.TOOLCHAIN_STORE ? { store: storeUrl(flags.store, io) } : {}),
    chainsDir: globals.chains,
    pluginsDir: globals.plugins,
    watch: flags.watch,
    isolation: isolationFlag(flags.isolation),
    cache: ctx.diskCache(),
    concurrency,
    ...(forEach !== undefined ? { maxForEachElements: forEach } : {}),
    stalledIntervalMs: duration('stalled-interval', flags.stalledInterval, false),
    reconcileIntervalMs: duration('reconcile-interval', flags.reconcileInterval, false),
    recover: flags.recover,
    // The chains' triggers start their runs here (one run per tick across every process on the store).
    triggers: true,
    onTrigger: (e) => say(printable(describeTriggerEvent(e))),
    onNotice: say,
    onChainsReloaded: (e) => {
      say(`chains reloaded: ${e.chains.length} runnable`);
      for (const d of e.diagnostics) say(showDiagnostic(io.cwd, d));
    },
  });
  const unguard = guardProcess({ pluginsDir: globals.plugins, report: (line) => say(`warning: ${line}`) });
  try {
    for (const d of worker.engine.diagnostics()) say(showDiagnostic(io.cwd, d));
    say(`ready: ${worker.engine.chains().length} chains, up to ${concurrency} runs at once (pid ${process.pid})`);
    const signal = await untilSignal(() => {
      say('second signal: exiting now; the runs executing here will be resumed by other workers');
      exitNow(130);
    });
    say(`${signal}: taking no more runs; ${worker.active()} executing, ${graceMs / 1000} s to finish`);
    const inTime = await worker.close(graceMs);
    say(inTime ? 'stopped' : 'grace over: the runs left are released to other workers');
    if (!inTime) exitNow(EXIT_OK); // their steps are still executing here: leave them to the new owners
    return EXIT_OK;
  } finally {
    unguard();
  }
}

/** The first SIGTERM/SIGINT; a second one calls `again`. */
function untilSignal(again: () => void): Promise<string> {
  return new Promise((resolve) => {
    let seen = false;
    const on = (signal: string): void => {
      if (seen) return again();
      seen = true;
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
