import { Writable } from 'node:stream';
import { printableJson } from '../../common/printable.js';
import type { Command } from 'commander';
import { createEngine } from '../../engine/engine.js';
import { ToolchainError, type Diagnostic } from '../../common/errors.js';
import { createMcpServer, isToolRun, serveStdio } from '../../llm/mcp/index.js';
import { createRegistry, createSchemaCompiler } from '../../registry/index.js';
import { EXIT_OK } from '../io.js';
import { approvedBy } from '../../call/index.js';
import { collect, ISOLATION_HELP, isolationFlag } from '../shared-options.js';
import { guardProcess } from '../process-guard.js';
import type { CommandContext } from '../main.js';
import type { ApprovalRequest } from '../../registry/types.js';
import { showDiagnostic } from '../paths.js';
import { packageVersion } from '../../schemas/schema-files.js';
import { storeUrl } from '../store-url.js';
import { storeWhenNeeded } from '../store-when-needed.js';

// `toolchain mcp`: every tool and chain over MCP on stdin/stdout, for any MCP client
// to spawn. Stdout carries the protocol and nothing else — logs, plugin reloads and problems go to
// stderr, and so does anything a tool handler prints with console.log. Plugins and chains reload
// while it runs (unless --no-watch); clients are told when the list of tools changes. It ends
// when the client closes stdin.
//
// A dangerous tool not allowed by --approve, and a chain that may wait, is called as a durable run
// on the run store (--store): its approvals are put to the client (elicitation) or left for a
// person (`toolchain approvals`), and this process wakes the runs whose wait is over (timers).

interface McpFlags {
  readonly approve: string[];
  readonly watch: boolean;
  readonly isolation: string;
  readonly store?: string;
  readonly concurrency?: string;
}


export function registerMcp(program: Command, ctx: CommandContext): void {
  program
    .command('mcp')
    .description('serve every tool and chain over MCP (stdio)')
    .option('--approve <tool>', 'allow calls of this dangerous tool (repeatable); others ask the client, or wait for a person', collect, [])
    .option('--store <url>', 'where calls that wait for approval are recorded: sqlite:FILE, postgres://…, redis://…, memory: (default: TOOLCHAIN_STORE, else sqlite:.toolchain/runs.db)')
    .option('--no-watch', 'do not reload plugins and chains when their files change')
    .option('--isolation <level>', ISOLATION_HELP, 'worker')
    .option('--concurrency <n>', 'at most this many calls at work at once; the others wait their turn (default 8)')
    .action(async (flags: McpFlags) => {
      ctx.exit(await serveMcp(ctx, flags));
    });
}

async function serveMcp(ctx: CommandContext, flags: McpFlags): Promise<number> {
  const { io } = ctx;
  const globals = ctx.globals();
  const isolation = isolationFlag(flags.isolation);
  const concurrency = flags.concurrency === undefined ? undefined : Number(flags.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new ToolchainError('USAGE', `--concurrency must be a whole number of at least 1, got '${flags.concurrency}'`);
  }
  const say = (line: string): void => void io.stderr.write(`toolchain mcp: ${line}\n`);
  const problems = (ds: readonly Diagnostic[]): void => {
    for (const d of ds) say(showDiagnostic(io.cwd, d));
  };
  const restoreConsole = consoleToStderr(io.stderr);
  const protocol = protocolStdout(io.stdout, io.stderr);
  const unguard = guardProcess({ pluginsDir: globals.plugins, report: say });
  const log = (entry: object): void => void io.stderr.write(`${printableJson(entry)}\n`);
  // Refreshes are deferred: the registry reports a change from inside its own update.
  let refresh: () => void = () => undefined;
  const cache = ctx.diskCache();
  const registry = createRegistry({ schemas: createSchemaCompiler(cache === 'off' ? {} : { cache }) });
  const unsubscribe = registry.onChange(() => setImmediate(() => refresh()));
  const approved = approvedBy(flags.approve);
  // Not allowed by --approve: an approval request (asked of the client, or left for a person).
  const approve = (req: ApprovalRequest): boolean | 'wait' => approved(req) || 'wait';
  const store = storeWhenNeeded(storeUrl(flags.store, io), io.cwd);
  try {
    const engine = await createEngine({
      store,
      timers: true,
      approve,
      chainsDir: globals.chains,
      pluginsDir: globals.plugins,
      watch: flags.watch,
      registry,
      cache,
      isolation,
      logger: log,
      onPluginEvent: (e) => {
        if (e.type !== 'plugin:loaded') say(`plugin ${e.plugin}${e.version ? ` ${e.version}` : ''}: ${e.type.slice('plugin:'.length)}`);
        problems(e.diagnostics ?? []);
      },
      onChainsReloaded: (e) => {
        problems(e.diagnostics);
        refresh();
      },
    });
    try {
      problems(engine.diagnostics());
      const mcp = await createMcpServer(engine, {
        version: packageVersion(),
        approve,
        log,
        ...(concurrency !== undefined ? { concurrency } : {}),
      });
      refresh = () => void mcp.refresh().catch((error: unknown) => say(`could not notify the client: ${(error as Error).message}`));
      say(`serving ${engine.tools().tools().length} tools and ${engine.chains().filter((c) => !isToolRun(c.name)).length} chains`);
      await serveStdio(mcp, io.stdin, protocol.out);
    } finally {
      await engine.close();
    }
  } finally {
    if (typeof store === 'object') await store.close();
    unsubscribe();
    unguard();
    protocol.restore();
    restoreConsole();
  }
  return EXIT_OK;
}

/**
 * The protocol owns stdout: while serving, anything else written to the process's stdout (a
 * handler's `process.stdout.write`, isolation none) goes to stderr, and the protocol writes
 * through a stream of its own.
 */
function protocolStdout(stdout: Writable, stderr: NodeJS.WritableStream): { out: Writable; restore: () => void } {
  if (stdout !== process.stdout) return { out: stdout, restore: () => undefined };
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => (stderr.write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
  const out = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      (write as (c: Buffer, cb: (error?: Error | null) => void) => boolean).call(process.stdout, chunk, callback);
    },
  });
  return { out, restore: () => void (process.stdout.write = write) };
}

/** Handlers that print with console.log would corrupt the protocol on stdout: send console output to stderr. */
function consoleToStderr(stderr: NodeJS.WritableStream): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  const toStderr = (...args: unknown[]): void => void stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`);
  console.log = console.info = console.debug = toStderr;
  return () => Object.assign(console, saved);
}
