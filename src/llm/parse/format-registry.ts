import { closestNames, describeKind, ToolchainError } from '../../common/errors.js';
import { isRecord } from '../../common/json.js';
import type { ToolCallFormat } from './format.js';
import { anthropicLegacy } from './formats/anthropic-legacy.js';
import { deepseek } from './formats/deepseek.js';
import { functionGemma } from './formats/function-gemma.js';
import { functionaryV31 } from './formats/functionary-v31.js';
import { functionaryV32 } from './formats/functionary-v32.js';
import { glm } from './formats/glm.js';
import { harmony } from './formats/harmony.js';
import { hermes } from './formats/hermes.js';
import { invoke } from './formats/invoke.js';
import { json } from './formats/json.js';
import { kimiK2 } from './formats/kimi-k2.js';
import { commandR, functools, granite, internlm, llama3Json, nemotron } from './formats/marked-json.js';
import { mistral } from './formats/mistral.js';
import { pythonic } from './formats/pythonic.js';
import { qwen3Coder } from './formats/qwen3-coder.js';
import { toolTags } from './formats/tool-tags.js';

// The formats parseToolCalls knows, in the order they run. Order matters where markers overlap:
// Harmony first (it hides its analysis channel from everyone); the formats that share
// <tool_call> go from the most specific content to the least (Qwen3-Coder's <function=…>, GLM's
// bare name, then Hermes' JSON); <|python_tag|> JSON before <|python_tag|> Python; the catch-all
// `json` last, since it reads any JSON object. A format added with registerToolCallFormat goes
// before `json` unless told where, like vLLM's --tool-parser-plugin or Ollama's parser registry.

const BUILT_IN: readonly ToolCallFormat[] = [
  harmony,
  kimiK2,
  deepseek,
  mistral,
  qwen3Coder,
  functionaryV31,
  glm,
  invoke,
  anthropicLegacy,
  functionGemma,
  llama3Json,
  pythonic,
  functionaryV32,
  granite,
  nemotron,
  commandR,
  internlm,
  functools,
  hermes,
  toolTags,
  json,
];

/** True for the formats this module ships (their markers are known to the streaming parser). */
export function isBuiltIn(format: ToolCallFormat): boolean {
  return BUILT_IN_SET.has(format);
}

const BUILT_IN_SET: ReadonlySet<ToolCallFormat> = new Set(BUILT_IN);
/** Lists are never changed in place (registering replaces the list): answered once per list, not once per stream. */
const allBuiltInLists = new WeakMap<readonly ToolCallFormat[], boolean>();

/** True when every format of the list ships with this module (a stream then knows what can open and close a call). */
export function allBuiltIn(formats: readonly ToolCallFormat[]): boolean {
  let all = allBuiltInLists.get(formats);
  if (all === undefined) {
    all = formats.every(isBuiltIn);
    allBuiltInLists.set(formats, all);
  }
  return all;
}

/** The registry every parseToolCalls and createToolCallStream use unless given `formats`. */
let registered: readonly ToolCallFormat[] = BUILT_IN;

export interface RegisterOptions {
  /** The name of the format to run before (default: `json`, the catch-all, so it runs after every other). */
  readonly before?: string;
}

function checkFormat(format: unknown): asserts format is ToolCallFormat {
  const what = 'registerToolCallFormat';
  if (!isRecord(format)) throw new ToolchainError('USAGE', `${what}: expected a format { name, models, detect, parse }, got ${describeKind(format)}`);
  if (typeof format.name !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(format.name)) {
    throw new ToolchainError('USAGE', `${what}: 'name' must be lower-case letters, digits, '.', '_' or '-', got ${JSON.stringify(format.name) ?? describeKind(format.name)}`);
  }
  for (const key of ['detect', 'parse'] as const) {
    if (typeof format[key] !== 'function') throw new ToolchainError('USAGE', `${what}: format '${format.name}' needs a '${key}' function, got ${describeKind(format[key])}`);
  }
  if (format.markers !== undefined && (typeof format.markers !== 'string' || format.markers === '')) {
    throw new ToolchainError('USAGE', `${what}: format '${format.name}': 'markers' must be a non-empty string of characters (or left out), got ${JSON.stringify(format.markers) ?? describeKind(format.markers)}`);
  }
  if (typeof format.models !== 'string') throw new ToolchainError('USAGE', `${what}: format '${format.name}' needs 'models' (a string naming who writes it), got ${describeKind(format.models)}`);
}

function unknownFormat(name: string, where: string): ToolchainError {
  const closest = closestNames(name, registered.map((f) => f.name), 1)[0];
  return new ToolchainError('USAGE', `${where}: no tool-call format is named '${name}'${closest ? ` (did you mean '${closest}'?)` : ''}; known: ${registered.map((f) => f.name).join(', ')}`);
}

/** Adds a format to the registry; returns a function that removes it again. */
export function registerToolCallFormat(format: ToolCallFormat, options: RegisterOptions = {}): () => void {
  checkFormat(format);
  if (registered.some((f) => f.name === format.name)) throw new ToolchainError('USAGE', `registerToolCallFormat: a format named '${format.name}' is already registered`);
  const before = options.before ?? 'json';
  const at = registered.findIndex((f) => f.name === before);
  if (at < 0) throw unknownFormat(before, "registerToolCallFormat: 'before'");
  registered = [...registered.slice(0, at), format, ...registered.slice(at)];
  return () => {
    registered = registered.filter((f) => f !== format);
  };
}

/** Every registered format, in the order they run. */
export function toolCallFormats(): readonly ToolCallFormat[] {
  return registered;
}

/**
 * `formats` as given to parseToolCalls: names of registered formats, or formats themselves;
 * undefined is all of them. Formats given as objects run first, in the order given (the caller
 * knows its model best); named ones run in registry order, whatever order they are listed in.
 */
export function resolveFormats(formats: unknown): readonly ToolCallFormat[] {
  if (formats === undefined) return registered;
  if (!Array.isArray(formats)) throw new ToolchainError('USAGE', `parseToolCalls: 'formats' must be an array of format names, got ${describeKind(formats)}`);
  const own: ToolCallFormat[] = [];
  const named = new Set<ToolCallFormat>();
  formats.forEach((entry: unknown, i) => {
    if (typeof entry === 'string') {
      const format = registered.find((f) => f.name === entry);
      if (format === undefined) throw unknownFormat(entry, `parseToolCalls: 'formats[${i}]'`);
      named.add(format);
    } else {
      checkFormat(entry);
      own.push(entry);
    }
  });
  return [...own, ...registered.filter((f) => named.has(f))];
}
