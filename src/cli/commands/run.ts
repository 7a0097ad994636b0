import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import type { ChainPlan } from '../../compiler/plan.js';
import { createEngine } from '../../engine.js';
import { ToolchainError } from '../../common/errors.js';
import { printable } from '../../common/printable.js';
import type { RunEvent, RunResult } from '../../executor/index.js';
import type { ApprovalRequest } from '../../registry/types.js';
import { EXIT_OK, exitCodeFor, type CliIO } from '../io.js';
import { approvedBy } from '../../call/index.js';
import { collect, ISOLATION_HELP, isolationFlag } from '../shared-options.js';
import { guardProcess } from '../process-guard.js';
import { reportStalls } from '../stall-report.js';
import type { CommandContext } from '../main.js';

// `toolchain run CHAIN` (SPEC §5): inputs from --input-file, then --input-json, then each
// --input KEY=VALUE (later ones win); outputs as JSON on stdout (or the whole result with
// --json); live progress on stderr only when it is a terminal; exit 0 / 1 (the run failed) /
// 2 (bad usage, bad input, unknown or invalid chain, a tool that is not installed).

interface RunFlags {
  readonly input: string[];
  readonly inputJson?: string;
  readonly inputFile?: string;
  readonly json: boolean;
  readonly approve: string[];
  readonly concurrency?: string;
  readonly isolation: string;
}


export function registerRun(program: Command, ctx: CommandContext): void {
  program
    .command('run')
    .description('run a chain and print its outputs as JSON')
    .argument('<chain>', 'the chain to run')
    .option('--input <key=value>', 'one input (repeatable); strings are coerced to the type the chain declares', collect, [])
    .option('--input-json <json>', 'inputs as one JSON object')
    .option('--input-file <file>', 'inputs from a JSON file, or - for standard input')
    .option('--json', 'print the whole result as one JSON object', false)
    .option('--approve <tool>', 'allow calls of this dangerous tool (repeatable)', collect, [])
    .option('--concurrency <n>', 'at most this many steps at once')
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
  // One run calls a few of the installed tools: compile their validators and import their
  // handlers on first use only.
  const isolation = isolationFlag(flags.isolation);
  const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache(), isolation });
  // Plugin code in this thread (loaded lazily, from here on) may neither end nor crash the process.
  const unguard = guardProcess({ pluginsDir: globals.plugins, report: (line) => void io.stderr.write(`${printable(`warning: ${line}`)}\n`) });
  try {
    const input = await readInput(io, flags, engine.chain(chainName));
    const approved = approvedBy(flags.approve);
    const progress = io.stderr.isTTY ? createProgress(io.stderr) : undefined;
    const abort = new AbortController();
    const onInterrupt = (): void => abort.abort();
    process.once('SIGINT', onInterrupt);
    const stalls = reportStalls((name) => engine.chain(name), (reason) => abort.abort(reason));
    let result: RunResult;
    try {
      result = await engine.run(chainName, input, {
        signal: abort.signal,
        approve: (req) => approved(req) || askApproval(io, req),
        onEvent: (e) => {
          stalls.onEvent(e);
          progress?.onEvent(e);
        },
        ...(concurrency !== undefined ? { concurrency } : {}),
      });
    } finally {
      process.removeListener('SIGINT', onInterrupt);
      stalls.release();
      progress?.done();
    }
    if (flags.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.status === 'succeeded') io.stdout.write(`${JSON.stringify(result.outputs ?? null, null, 2)}\n`);
    if (result.status === 'succeeded') return EXIT_OK;
    const error = result.error!;
    io.stderr.write(`${printable(`error: ${error.code} ${error.message}${error.step !== undefined ? ` (step '${error.step}')` : ''}`)}\n`);
    return exitCodeFor(error.code);
  } finally {
    await engine.close();
    unguard();
  }
}

// -------------------------------------------------------------------------------------------------
// Inputs

async function readInput(io: CliIO, flags: RunFlags, plan: ChainPlan | undefined): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = {};
  if (flags.inputFile !== undefined) {
    const text = flags.inputFile === '-' ? await readCapped(io.stdin, 'standard input') : await readFileText(resolve(io.cwd, flags.inputFile));
    Object.assign(input, parseObject(text, flags.inputFile === '-' ? 'standard input' : flags.inputFile));
  }
  if (flags.inputJson !== undefined) Object.assign(input, parseObject(flags.inputJson, '--input-json'));
  const properties = (plan?.inputs.schema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const pair of flags.input) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ToolchainError('USAGE', `--input takes KEY=VALUE, got '${pair}'`);
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    // Scalars stay strings (the engine coerces them to the declared type); objects and arrays
    // cannot be coerced from text, so for those the value is read as JSON.
    const type = Object.hasOwn(properties, key) ? properties[key]?.type : undefined;
    setKey(input, key, type === 'object' || type === 'array' ? parseJson(value, `--input ${key}`) : value);
  }
  return input;
}

function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  // Keeps `__proto__` an ordinary (and then rejected) key instead of a prototype change.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Inputs are small; a FIFO, /dev/zero or an endless pipe must not grow the process without bound. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

async function readFileText(file: string): Promise<string> {
  let stream: Readable;
  try {
    const handle = await open(file, 'r');
    stream = handle.createReadStream();
  } catch (error) {
    throw new ToolchainError('USAGE', `cannot read --input-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return readCapped(stream, file);
}

/** The stream's text, failing with INPUT_INVALID (and closing it) once it passes MAX_INPUT_BYTES. */
async function readCapped(stream: Readable, where: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += bytes.length;
      if (size > MAX_INPUT_BYTES) {
        throw new ToolchainError('INPUT_INVALID', `${where} holds more than ${MAX_INPUT_BYTES} bytes of input; inputs are read whole, so give a smaller file`);
      }
      chunks.push(bytes);
    }
  } catch (error) {
    if (error instanceof ToolchainError) throw error;
    throw new ToolchainError('USAGE', `cannot read ${where}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  } finally {
    if (stream !== process.stdin) stream.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ToolchainError('INPUT_INVALID', `${where} is not valid JSON: ${(error as Error).message}`);
  }
}

function parseObject(text: string, where: string): Record<string, unknown> {
  const value = parseJson(text, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ToolchainError('INPUT_INVALID', `${where} must hold a JSON object of inputs`);
  }
  return value as Record<string, unknown>;
}

// -------------------------------------------------------------------------------------------------
// Approval (SPEC §3.4): --approve TOOL, or a prompt when both ends are a terminal.

async function askApproval(io: CliIO, req: ApprovalRequest): Promise<boolean> {
  if (!io.stdin.isTTY || !io.stderr.isTTY) return false;
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const args = JSON.stringify(req.args);
    const answer = await rl.question(`\nstep '${req.step}' wants to call dangerous tool '${req.tool}' with ${args.length > 200 ? `${args.slice(0, 197)}...` : args}\nallow? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

// -------------------------------------------------------------------------------------------------
// Progress: one line per step, redrawn in place with a few ANSI codes (cursor up, clear line).

interface Line {
  label: string;
  state: 'running' | 'retrying' | 'succeeded' | 'failed' | 'skipped';
  detail: string;
}

const MARK: Record<Line['state'], string> = {
  running: '\u001b[36m…\u001b[0m',
  retrying: '\u001b[33m↻\u001b[0m',
  succeeded: '\u001b[32m✓\u001b[0m',
  failed: '\u001b[31m✗\u001b[0m',
  skipped: '\u001b[90m–\u001b[0m',
};

function createProgress(out: NodeJS.WritableStream): { onEvent: (e: RunEvent) => void; done: () => void } {
  const lines = new Map<string, Line>();
  // A sub-chain's steps are labelled with the step that runs it (`first › locate`): sub-chains
  // run side by side, so their rows interleave and indentation alone would not say whose they are.
  const prefix = new Map<string, string>();
  let drawn = 0;
  const ms = (n: number): string => (n < 1000 ? `${Math.round(n)}ms` : `${(n / 1000).toFixed(1)}s`);
  const draw = (): void => {
    let text = drawn > 0 ? `\u001b[${drawn}A` : '';
    for (const line of lines.values()) text += `\u001b[2K${MARK[line.state]} ${line.label}${line.detail ? `  \u001b[90m${line.detail}\u001b[0m` : ''}\n`;
    drawn = lines.size;
    out.write(text);
  };
  const onEvent = (e: RunEvent): void => {
    if (e.type === 'run:started') {
      prefix.set(e.run_id, e.parent ? `${prefix.get(e.parent.run_id) ?? ''}${e.parent.step} › ` : '');
      return;
    }
    if (e.type === 'run:finished') return;
    const key = `${e.run_id}/${e.step}`;
    const label = `${prefix.get(e.run_id) ?? ''}${e.step}`;
    const line = lines.get(key) ?? { label, state: 'running', detail: '' };
    lines.set(key, line);
    switch (e.type) {
      case 'step:started':
        line.state = 'running';
        break;
      case 'step:retrying':
        line.state = 'retrying';
        line.detail = `attempt ${e.attempt} failed (${e.error.code}); ${e.fallback ? `fallback: ${e.fallback}` : `retrying in ${ms(e.delay_ms)}`}`;
        break;
      case 'step:succeeded':
        line.state = 'succeeded';
        line.detail = `${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}${e.fallback ? `, fallback ${e.fallback}` : ''}`;
        break;
      case 'step:failed':
        line.state = 'failed';
        line.detail = `${e.error.code} after ${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}`;
        break;
      case 'step:skipped':
        line.state = 'skipped';
        line.detail = e.reason === 'when' ? 'skipped (when)' : 'skipped (a step it needs was skipped)';
        break;
    }
    draw();
  };
  return { onEvent, done: () => undefined };
}
