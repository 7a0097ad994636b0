import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import type { ChainPlan } from '../../compiler/plan.js';
import { createEngine } from '../../engine.js';
import { ToolchainError } from '../../common/errors.js';
import { printable } from '../../common/printable.js';
import type { LogEntry, RunResult } from '../../executor/index.js';
import { createLiveProgress, type LiveProgress } from '../progress/live-progress.js';
import type { ApprovalRequest } from '../../registry/types.js';
import { EXIT_OK, exitCodeFor, type CliIO } from '../io.js';
import { approvedBy } from '../../call/index.js';
import { collect } from '../shared-options.js';
import { stepMocks, type MockSpec } from '../../testing/index.js';
import type { StepMocks } from '../../executor/index.js';
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
  readonly mock: string[];
  readonly verbose: boolean;
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
    .option('--verbose', "show tools' ctx.log lines on stderr", false)
    .option('--mock <step=json>', 'dry run: step STEP returns this JSON instead of calling its tool (repeatable; `sub›step` for a sub-chain step)', collect, [])
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
  const progress = io.stderr.isTTY ? createLiveProgress(io.stderr as NodeJS.WriteStream) : undefined;
  const logger = flags.verbose ? (entry: LogEntry): void => showLog(io, progress, entry) : undefined;
  const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache(), ...(logger ? { logger } : {}) });
  let result: RunResult | undefined;
  try {
    const input = await readInput(io, flags, engine.chain(chainName));
    const approved = approvedBy(flags.approve);
    const mocks = parseMocks(flags.mock);
    const abort = new AbortController();
    const onInterrupt = (): void => abort.abort();
    process.once('SIGINT', onInterrupt);
    try {
      result = await engine.run(chainName, input, {
        signal: abort.signal,
        approve: (req) => approved(req) || (progress ? progress.pause(() => askApproval(io, req)) : askApproval(io, req)),
        ...(progress ? { onEvent: progress.onEvent } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
        ...(mocks ? { mocks } : {}),
      });
    } finally {
      process.removeListener('SIGINT', onInterrupt);
      progress?.done(result);
    }
    if (flags.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.status === 'succeeded') io.stdout.write(`${JSON.stringify(result.outputs ?? null, null, 2)}\n`);
    if (result.status === 'succeeded') return EXIT_OK;
    const error = result.error!;
    io.stderr.write(`${printable(`error: ${error.code} ${error.message}${error.step !== undefined ? ` (step '${error.step}')` : ''}`)}\n`);
    return exitCodeFor(error.code);
  } finally {
    await engine.close();
  }
}

// -------------------------------------------------------------------------------------------------
// Inputs

/** `--mock STEP=JSON` (SPEC §10): the step returns the JSON and never calls its tool. */
function parseMocks(pairs: readonly string[]): StepMocks | undefined {
  const specs = new Map<string, MockSpec>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ToolchainError('USAGE', `--mock takes STEP=JSON, got '${pair}'`);
    const step = pair.slice(0, eq);
    if (specs.has(step)) throw new ToolchainError('USAGE', `--mock ${step} is given twice`);
    specs.set(step, { output: parseJson(pair.slice(eq + 1), `--mock ${step}`) });
  }
  return stepMocks(specs);
}

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

/** A tool's `ctx.log` line with --verbose: `[step] message {fields}`, above the progress block. */
function showLog(io: CliIO, progress: LiveProgress | undefined, entry: LogEntry): void {
  const fields = entry.fields && Object.keys(entry.fields).length ? ` ${JSON.stringify(entry.fields)}` : '';
  const line = printable(`[${entry.step}${entry.attempt > 1 ? ` attempt ${entry.attempt}` : ''}] ${entry.message}${fields}`);
  if (progress) progress.log(line);
  else io.stderr.write(`${line}\n`);
}
