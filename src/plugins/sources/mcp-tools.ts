import type { Diagnostic } from '../../common/errors.js';
import type { ToolContext, ToolDefinition } from '../../registry/types.js';
import type { McpConnection } from './mcp-connection.js';
import type { McpToolInfo } from './mcp-listing.js';
import { mcpOutput } from './mcp-result.js';
import { distinctNames, type SourceTool } from './source-tools.js';

// An MCP server's listing → tool definitions. The input schema is the tool's `parameters`, its
// output schema (when it has one) its `returns`; a tool the server marks destructive
// (`destructiveHint: true`, and not read-only) is dangerous unless the manifest says otherwise.
// Names outside what the registry and models accept are made valid (`.` and `/` become `_`),
// and two names that meet are reported. A tool the server runs only as an MCP task is left out
// with a warning: the client does not run tasks. The handler calls the shared connection.

export function mcpSourceTools(plugin: string, listing: readonly McpToolInfo[], connection: McpConnection): { tools: SourceTool[]; warnings: Diagnostic[] } {
  const { names, clashes } = distinctNames(listing.map((t) => t.name));
  const warnings: Diagnostic[] = clashes.map((c): Diagnostic => ({
    code: 'NAME_COLLISION',
    severity: 'warning',
    message: `the MCP server's tools '${c.first}' and '${c.raw}' make the same tool name; '${c.raw}' is '${plugin}/${c.name}'`,
    pointer: '/source',
  }));
  const tools = listing.map((info, k): SourceTool => {
    const name = names[k]!;
    const qualified = `${plugin}/${name}`;
    const handler = (args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> => {
      const report = ctx.progress ? ctx.progress.bind(ctx) : undefined;
      const onProgress = report ? (p: { progress: number; total?: number; message?: string }) => report({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }) : undefined;
      return connection.call(info.name, args, ctx.signal, onProgress).then((result) => mcpOutput(result, qualified));
    };
    const description = info.description ?? info.title ?? info.annotations?.title ?? '';
    const def: ToolDefinition = {
      name,
      handler,
      ...(description !== '' ? { description } : {}),
      parameters: asJsonSchema(info.inputSchema, true),
      ...(info.outputSchema ? { returns: asJsonSchema(info.outputSchema, false) } : {}),
      dangerous: info.annotations?.destructiveHint === true && info.annotations.readOnlyHint !== true,
    };
    const unsupported = info.taskOnly
      ? { message: `the MCP server's tool '${info.name}' is left out: it runs only as an MCP task (execution.taskSupport: required), and the engine calls tools with a plain tools/call`, pointer: '/source' }
      : undefined;
    return { name, aliases: info.name === name ? [] : [info.name], def, ...(unsupported ? { unsupported } : {}) };
  });
  return { tools, warnings };
}

/**
 * The schema as the engine's draft-07 validator takes it: a `$schema` naming another draft
 * (servers built on zod send 2020-12) is dropped, and arguments are always an object.
 */
function asJsonSchema(schema: Record<string, unknown>, args: boolean): Record<string, unknown> {
  const { $schema: _dropped, ...rest } = schema;
  if (args && rest.type === undefined) return { type: 'object', ...rest };
  return rest;
}
