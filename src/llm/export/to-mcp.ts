import type { JsonSchema } from '../../common/json.js';
import type { Callable, CallableSource } from './callables.js';
import { objectSchema, selectCallables, type ExportOptions } from './select-callables.js';

// MCP tool descriptors, as `tools/list` returns them. The name is the same exported name as for
// OpenAI and Anthropic (so one map routes calls from every client); `title` shows the qualified
// name to people; a dangerous tool carries `destructiveHint`, and the engine still asks for
// approval when it is called. `outputSchema` says what a successful call's `structuredContent`
// holds (toCallToolResult): the tool's `returns` or the chain's inferred outputs, as
// an object — a value that is not one is sent as `{ result }` —, or a truncation marker for a tool
// that may cut its result. A callable whose result nothing describes has none.

export interface McpToolAnnotations {
  readonly title?: string;
  readonly destructiveHint?: boolean;
}

export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: McpToolAnnotations;
}

export function toMcpTools(source: CallableSource | readonly Callable[], options: ExportOptions = {}): McpTool[] {
  return selectCallables(source, options).map((c) => {
    const outputSchema = mcpOutputSchema(c);
    return {
      name: c.exportedName,
      title: c.kind === 'chain' ? `chain ${c.target}` : c.target,
      description: c.description,
      inputSchema: objectSchema(c.parameters),
      ...(outputSchema ? { outputSchema } : {}),
      ...(c.dangerous ? { annotations: { destructiveHint: true } } : {}),
    };
  });
}

/** What `truncate: true` sends instead of a result over the size limit (registry/truncate-result.ts). */
const TRUNCATED: JsonSchema = {
  type: 'object',
  properties: { truncated: { const: true }, original_bytes: { type: 'integer' }, value: {} },
  required: ['truncated', 'original_bytes', 'value'],
};

export function mcpOutputSchema(c: Pick<Callable, 'returns' | 'truncates'>): JsonSchema | undefined {
  const returns = c.returns;
  // Only a schema whose one `type` says whether the value is an object tells how it is sent.
  if (returns === undefined || typeof returns.type !== 'string') return undefined;
  const sent = returns.type === 'object' ? structuredClone(returns) : { type: 'object', properties: { result: structuredClone(returns) }, required: ['result'] };
  return c.truncates ? { type: 'object', anyOf: [sent, TRUNCATED] } : sent;
}
