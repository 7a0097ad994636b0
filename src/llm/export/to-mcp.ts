import type { JsonSchema } from '../../common/json.js';
import type { Callable, CallableSource } from './callables.js';
import { objectSchema, selectCallables, type ExportOptions } from './select-callables.js';

// MCP tool descriptors, as `tools/list` returns them. The name is the same exported name as for
// OpenAI and Anthropic (so one map routes calls from every client); `title` shows the qualified
// name to people; a dangerous tool carries `destructiveHint`, and the engine still asks for
// approval when it is called. No `outputSchema`: a tool's `returns` need not be an object, and a
// truncated result would not match it.

export interface McpToolAnnotations {
  readonly title?: string;
  readonly destructiveHint?: boolean;
}

export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly annotations?: McpToolAnnotations;
}

export function toMcpTools(source: CallableSource | readonly Callable[], options: ExportOptions = {}): McpTool[] {
  return selectCallables(source, options).map((c) => ({
    name: c.exportedName,
    title: c.kind === 'chain' ? `chain ${c.target}` : c.target,
    description: c.description,
    inputSchema: objectSchema(c.parameters),
    ...(c.dangerous ? { annotations: { destructiveHint: true } } : {}),
  }));
}
