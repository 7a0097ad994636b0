import { closestNames, describeKind, ToolchainError } from '../../common/errors.js';
import { isRecord } from '../../common/json.js';
import type { ToolCallFormat } from './format.js';
import { resolveFormats } from './format-registry.js';
import { toKnownTools, type KnownTools, type ToolsOption } from './known-tools.js';

// The options of parseToolCalls and createToolCallStream, checked up front: a wrong option is the
// caller's mistake (USAGE, naming the option and what was given), never something to guess around.

export interface ParseOptions {
  /**
   * The tools the model was offered: an engine, OpenAI function definitions (as toOpenAITools
   * returns them), Anthropic or MCP definitions, or names. With them, a call to any other name is
   * an UNKNOWN_TOOL problem (with the closest names), and values written as text are typed by
   * each tool's parameter schema.
   */
  readonly tools?: ToolsOption;
  /**
   * Only these formats, by name (or format objects of your own): a server that knows its model's
   * template passes one, so nothing else in the text is taken for a call. Default: every
   * registered format.
   */
  readonly formats?: readonly (string | ToolCallFormat)[];
}

export interface ParseSettings {
  readonly formats: readonly ToolCallFormat[];
  readonly tools: KnownTools | undefined;
}

const KEYS = ['tools', 'formats'];

export function checkParseOptions(options: unknown, caller = 'parseToolCalls'): ParseSettings {
  if (options === undefined) return { formats: resolveFormats(undefined), tools: undefined };
  if (!isRecord(options)) throw new ToolchainError('USAGE', `${caller}: options must be an object, got ${describeKind(options)}`);
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) {
      const closest = closestNames(key, KEYS, 1)[0];
      throw new ToolchainError('USAGE', `${caller}: unknown option '${key}'${closest ? ` (did you mean '${closest}'?)` : ''}; options are ${KEYS.join(', ')}`);
    }
  }
  return {
    formats: resolveFormats(options.formats),
    tools: options.tools === undefined ? undefined : toKnownTools(options.tools),
  };
}
