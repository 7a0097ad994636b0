import type { Command } from 'commander';
import { createEngine, type Engine } from '../../engine/engine.js';
import { ToolchainError } from '../../common/errors.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { relativeTo, showDiagnostic } from '../paths.js';
import { durationFlag } from '../duration-flag.js';
import { formatMs } from '../runs-table.js';
import type { Diagnostic } from '../../common/errors.js';
import { checkListenHost } from '../../serve/auth.js';
import { missingSecrets } from '../../triggers/webhook-secrets.js';
import { serveApprover } from '../../serve/approver.js';
import { tapObserver } from '../../serve/observer-tap.js';
import { LIMIT_NAMES, limitsFrom } from '../../serve/server-limits.js';
import { collect, describeRecovery, ISOLATION_HELP, isolationFlag, RECOVER_HELP } from '../shared-options.js';
import { guardProcess } from '../process-guard.js';
import { DEFAULT_STORE, runStoreUrl } from '../store-url.js';
import { describeTriggerEvent, triggerLogFields } from '../../triggers/event-text.js';

// `toolchain serve`: the HTTP API, the run inspector at `/`, metrics at /metrics and
// one JSON log line per run event on stdout (pretty with --verbose on a terminal). Plugins and
// chains reload while it runs. SIGTERM or SIGINT stops it gracefully: no new connections, open
// event streams end, requests in flight finish, runs get --grace to end before they are cancelled.
// The server's modules (Fastify, pino, prom-client) load only for this command.

interface ServeFlags {
  readonly port: string;
  readonly host: string;
  readonly token?: string;
  readonly approve: string[];
  readonly verbose: boolean;
  readonly watch: boolean;
  readonly grace: string;
  readonly store?: string;
  readonly queue?: string;
  readonly isolation: string;
  readonly recover: boolean;
  readonly limit: string[];
}

export function registerServe(program: Command, ctx: CommandContext): void {
  program
    .command('serve')
    .description('serve the HTTP API, the run inspector and metrics')
    .option('--port <port>', 'port to listen on', '7300')
    .option('--host <host>', 'address to listen on; anything but loopback needs a token', '127.0.0.1')
    .option('--token <token>', 'require Authorization: Bearer TOKEN; prefer env TOOLCHAIN_TOKEN (a flag is visible to every local user in ps)')
    .option('--approve <tool>', 'a standing approval: runs may call this dangerous tool without asking (repeatable); any other dangerous call waits for a person\'s decision (the Approvals page)', collect, [])
    .option('--verbose', 'debug-level logs, pretty on a terminal', false)
    .option('--no-watch', 'do not reload plugins and chains when their files change')
    .option('--store <url>', `where runs are recorded and read (default: env TOOLCHAIN_STORE, else ${DEFAULT_STORE})`)
    .option('--queue <url>', "submit the runs started over HTTP to this queue's workers (redis://HOST:PORT[/DB][?queue=NAME]); the store then defaults to that Redis")
    .option('--grace <duration>', 'on shutdown, how long runs in flight may take before they are cancelled', '10s')
    .option('--isolation <level>', ISOLATION_HELP, 'worker')
    .option('--no-recover', RECOVER_HELP)
    .option('--limit <name=value>', `a limit on what clients may hold (repeatable; also env TOOLCHAIN_SERVE_LIMITS): ${LIMIT_NAMES.join(', ')}`, collect, [])
    .action(async (flags: ServeFlags) => {
      ctx.exit(await serve(ctx, flags));
    });
}

function whole(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new ToolchainError('USAGE', `--${name} must be a whole number from ${min} to ${max}, got '${text}'`);
  return n;
}

async function serve(ctx: CommandContext, flags: ServeFlags): Promise<number> {
  const { io } = ctx;
  const globals = ctx.globals();
  const port = whole('port', flags.port, 0, 65535);
  const graceMs = durationFlag('grace', flags.grace, true);
  const isolation = isolationFlag(flags.isolation);
  const token = flags.token ?? (io.env.TOOLCHAIN_TOKEN || undefined);
  if (token !== undefined && token.length < 8) throw new ToolchainError('USAGE', 'the token must be at least 8 characters long');
  const limits = limitsFrom(io.env.TOOLCHAIN_SERVE_LIMITS, flags.limit);
  // Every argument is checked before a plugin loads: a refusal comes at once, and runs no plugin code.
  checkListenHost(flags.host, token);
  await (await import('../../serve/load-server.js')).loadServerPackages();
  const { createServer } = await import('../../serve/index.js');
  const { createObserver } = await import('../../observe/index.js');
  const { createCliLogger } = await import('../../observe/cli-logger.js');
  const logger = createCliLogger({ stream: io.stdout, verbose: flags.verbose });
  const say = (line: string): void => void io.stderr.write(`toolchain serve: ${line}\n`);
  if (flags.token !== undefined) {
    const warning = 'the token was given with --token, which every local user can read in the process list (ps); set TOOLCHAIN_TOKEN instead';
    say(`warning: ${warning}`);
    logger.warn({ event: 'token:on-command-line' }, warning);
  }
  // Each problem once on stderr for whoever watches the terminal, and once in the log at its
  // severity with its file, line, column and code, for whoever reads the log.
  const problems = (diagnostics: readonly Diagnostic[], context: { plugin?: string }): void => {
    for (const d of diagnostics) {
      const line = showDiagnostic(io.cwd, d);
      say(line);
      const where = d.file !== undefined ? { file: relativeTo(io.cwd, d.file), line: d.line ?? 1, col: d.col ?? 1 } : {};
      logger[d.severity === 'error' ? 'error' : 'warn']({ event: 'diagnostic', ...context, code: d.code, severity: d.severity, ...where }, line);
    }
  };
  // The observer needs the engine's plans and the engine needs the observer's log: tie the knot late.
  let engine: Engine | undefined;
  // Tapped: the server hears what runs woken by the engine's waker say (observer-tap.ts).
  const observer = tapObserver(createObserver({ chain: (name) => engine?.chain(name) }, { logger }));
  // Dangerous calls without a standing approval wait for a person; woken runs ask the same approver.
  const approve = serveApprover(flags.approve);
  engine = await createEngine({
    chainsDir: globals.chains,
    pluginsDir: globals.plugins,
    watch: flags.watch,
    isolation,
    // What one request can make the server do: a for_each over an input it sent is bounded here.
    maxForEachElements: limits.forEachElements,
    store: runStoreUrl(flags.store, io, flags.queue),
    ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
    observe: observer,
    approve,
    // Wakes every waiting run of the store when its time comes, or when an event or a decision makes it due.
    timers: true,
    // The chains' triggers start their runs here (one run per tick or event across every process
    // on the store), and their webhooks are served at /hooks/PATH with the secrets of this environment.
    triggers: true,
    secrets: io.env,
    onTrigger: (e) => logger.info(triggerLogFields(e), describeTriggerEvent(e)),
    // With a queue the workers execute runs, and take over those whose worker died.
    recover: flags.recover && flags.queue === undefined,
    onRecovery: (e) => logger[e.type === 'recovery:refused' ? 'warn' : 'info']({ event: e.type, ...e }, describeRecovery(e)),
    onPluginEvent: (e) => {
      const diagnostics = e.diagnostics ?? [];
      const level = e.type === 'plugin:error' || diagnostics.some((d) => d.severity === 'error') ? 'error' : diagnostics.length > 0 || e.type === 'plugin:inactive' ? 'warn' : 'info';
      logger[level]({ event: e.type, plugin: e.plugin, dir: relativeTo(io.cwd, e.dir), version: e.version, problems: diagnostics.length }, `${e.type} ${e.plugin}${diagnostics.length ? `: ${diagnostics.length} problem${diagnostics.length === 1 ? '' : 's'}` : ''}`);
      problems(diagnostics, { plugin: e.plugin });
    },
    onChainsReloaded: (e) => {
      logger.info({ event: 'chains:reloaded', chains: e.chains }, 'chains:reloaded');
      problems(e.diagnostics, {});
      if (engine) problems(missingSecrets(engine.chains(), io.env), {});
    },
  });
  const unguard = guardProcess({ pluginsDir: globals.plugins, report: (line) => logger.warn({ event: 'process:uncaught' }, line) });
  try {
    problems(engine.diagnostics(), {});
    problems(missingSecrets(engine.chains(), io.env), {});
    const server = await createServer(engine, { logger, approve: flags.approve, limits, ...(token !== undefined ? { token } : {}) });
    let url: string;
    try {
      url = await server.listen({ host: flags.host, port });
    } catch (error) {
      await server.close(0);
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new ToolchainError('USAGE', `port ${port} on ${flags.host} is in use; pick another with --port`);
      throw error;
    }
    // Listening for the signals before saying where: a SIGTERM right after that line stops it gracefully.
    const signalled = untilSignal();
    say(`${engine.chains().length} chains, ${engine.tools().tools().length} tools; inspector at ${url}/${token !== undefined ? '?token=…' : ''} (Ctrl-C stops)`);
    const signal = await signalled;
    say(`${signal}: finishing requests in flight; runs have ${formatMs(graceMs)}`);
    await server.close(graceMs);
    logger.flush();
    say('stopped');
    return EXIT_OK;
  } finally {
    unguard();
    await engine.close();
  }
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
