import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { ToolchainError } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { CliIO } from './io.js';
import { defineOwn } from '../common/define-own.js';
import { isRecord } from '../common/json.js';

// A run's input from the command line: --input-file, then --input-json over it, then
// each --input KEY=VALUE over both (the more specific source wins). One key given twice with
// --input is refused: which of the two was meant cannot be known.

export interface InputFlags {
  readonly input: readonly string[];
  readonly inputJson?: string;
  readonly inputFile?: string;
}

export async function readInput(io: CliIO, flags: InputFlags, plan: ChainPlan | undefined): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = {};
  if (flags.inputFile !== undefined) {
    const text = flags.inputFile === '-' ? await readCapped(io.stdin, 'standard input') : await readFileText(resolve(io.cwd, flags.inputFile));
    Object.assign(input, parseObject(text, flags.inputFile === '-' ? 'standard input' : flags.inputFile));
  }
  if (flags.inputJson !== undefined) Object.assign(input, parseObject(flags.inputJson, '--input-json'));
  const properties = (plan?.inputs.schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const given = new Set<string>();
  for (const pair of flags.input) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ToolchainError('USAGE', `--input takes KEY=VALUE, got '${pair}'`);
    const key = pair.slice(0, eq);
    if (given.has(key)) throw new ToolchainError('USAGE', `--input ${key}= is given twice; give each input once (--input overrides --input-json and --input-file, which need not repeat it)`);
    given.add(key);
    const value = pair.slice(eq + 1);
    // Scalars stay strings (the engine coerces them to the declared type); objects and arrays
    // cannot be coerced from text, so for those the value is read as JSON.
    const type = Object.hasOwn(properties, key) ? properties[key]?.type : undefined;
    // `__proto__` stays an ordinary (and then rejected) key instead of a prototype change.
    defineOwn(input, key, type === 'object' || type === 'array' ? parseJson(value, `--input ${key}`) : value);
  }
  return input;
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
  if (!isRecord(value)) throw new ToolchainError('INPUT_INVALID', `${where} must hold a JSON object of inputs`);
  return value;
}

