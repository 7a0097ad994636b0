import type { JsonSchema } from '../../common/json.js';
import { closestNames, describeKind, ToolchainError } from '../../common/errors.js';
import { isRecord } from '../../common/json.js';
import type { Callable, CallableSource } from '../export/callables.js';
import { exportNames } from '../export/export-names.js';

// The tools a model was offered, as the parsers need them: is a name one of them, and what are
// its parameters (to type values written as text). Taken from whatever the caller has at hand:
//
//   an engine, or { tools, chains }       names as the exporters give them (export-names.ts)
//   OpenAI definitions                    { type: 'function', function: { name, parameters } }
//   Anthropic / MCP definitions           { name, input_schema } / { name, inputSchema }
//   { name, parameters } or a bare name   anything else that names a tool

/** Anything `parseToolCalls({ tools })` accepts as one offered tool. */
export type ToolDescriptor =
  | string
  | { readonly type?: string; readonly function: { readonly name: string; readonly parameters?: unknown } }
  | { readonly name: string; readonly parameters?: unknown; readonly input_schema?: unknown; readonly inputSchema?: unknown };

export type ToolsOption = CallableSource | readonly ToolDescriptor[] | readonly Callable[];

export interface KnownTools {
  has(name: string): boolean;
  /** The parameters schema of an offered tool (undefined when it has none or the name is unknown). */
  parameters(name: string): JsonSchema | undefined;
  /** The offered names closest to `name`, best first. */
  closest(name: string): string[];
}

const SUGGESTIONS = 3;

function isCallable(value: unknown): value is Callable {
  return isRecord(value) && typeof value.target === 'string' && typeof value.baseName === 'string' && isRecord(value.ref);
}

function isSource(value: unknown): value is CallableSource {
  return isRecord(value) && (typeof value.tools === 'function' || Array.isArray(value.tools) || (isRecord(value.tools) && typeof value.tools.tools === 'function'));
}

/** `tools` as the parsers use it; a USAGE error (naming the entry) for what is not a tool. */
export function toKnownTools(option: unknown): KnownTools {
  if (isSource(option) || (Array.isArray(option) && option.length > 0 && option.every(isCallable))) {
    const names = exportNames(option as CallableSource);
    return {
      has: (name) => names.resolve(name) !== undefined,
      parameters: (name) => names.resolve(name)?.parameters,
      closest: (name) => closestNames(name, names.names(), SUGGESTIONS),
    };
  }
  if (!Array.isArray(option)) {
    throw new ToolchainError('USAGE', `parseToolCalls: 'tools' must be an engine or an array of tool definitions, got ${describeKind(option)}`);
  }
  const byName = new Map<string, JsonSchema | undefined>();
  option.forEach((entry: unknown, i) => {
    const [name, schema] = describe(entry);
    if (name === undefined) {
      throw new ToolchainError('USAGE', `parseToolCalls: 'tools[${i}]' must be a tool name or a definition with a name (OpenAI, Anthropic or MCP), got ${describeKind(entry)}`);
    }
    byName.set(name, schema);
  });
  return {
    has: (name) => byName.has(name),
    parameters: (name) => byName.get(name),
    closest: (name) => closestNames(name, byName.keys(), SUGGESTIONS),
  };
}

function describe(entry: unknown): [string | undefined, JsonSchema | undefined] {
  if (typeof entry === 'string') return [entry === '' ? undefined : entry, undefined];
  if (!isRecord(entry)) return [undefined, undefined];
  const fn = isRecord(entry.function) ? entry.function : entry;
  const name = typeof fn.name === 'string' && fn.name !== '' ? fn.name : undefined;
  const schema = fn.parameters ?? fn.input_schema ?? fn.inputSchema;
  return [name, isRecord(schema) ? schema : undefined];
}
