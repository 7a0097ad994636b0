import { toMcpTools, type McpTool } from '../export/to-mcp.js';
import type { CallableSource } from '../export/callables.js';

// What `tools/list` would answer now, and a fingerprint of it. Hot reload fires for every saved
// file, most of which change nothing a client sees (a handler's body, a comment); the server
// sends `notifications/tools/list_changed` only when the fingerprint moves.

export interface ToolList {
  readonly tools: McpTool[];
  readonly signature: string;
}

export function currentToolList(source: CallableSource): ToolList {
  const tools = toMcpTools(source);
  return { tools, signature: JSON.stringify(tools) };
}
