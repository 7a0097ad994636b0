import type { JsonSchema } from '../../common/json.js';
import type { Callable, CallableSource } from './callables.js';
import { objectSchema, selectCallables, type ExportOptions } from './select-callables.js';

// Anthropic tool definitions (`tools` of /v1/messages): the same names as OpenAI's (Anthropic's
// rule is the same ^[a-zA-Z0-9_-]{1,64}$) and the parameters as `input_schema`, which Anthropic
// takes as ordinary JSON Schema.

export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: JsonSchema;
}

export function toAnthropicTools(source: CallableSource | readonly Callable[], options: ExportOptions = {}): AnthropicTool[] {
  return selectCallables(source, options).map((c) => ({ name: c.exportedName, description: c.description, input_schema: objectSchema(c.parameters) }));
}
