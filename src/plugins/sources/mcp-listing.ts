import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

// An MCP server's tools/list, every page of it, as plain data (what is cached, compared and
// turned into tool definitions).

export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean; readonly title?: string };
  /** The server runs it only as an MCP task (`execution.taskSupport: required`): a plain tools/call is refused. */
  readonly taskOnly?: true;
}

/** More pages than any real server has: a server that keeps handing out cursors is cut off. */
const MAX_PAGES = 100;

export async function listAllTools(client: Client): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor !== undefined ? { cursor } : undefined);
    for (const t of result.tools) tools.push(plain(t));
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') break;
  }
  return tools;
}

function plain(t: McpToolInfo & { readonly execution?: { readonly taskSupport?: string } }): McpToolInfo {
  const a = t.annotations;
  return {
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    inputSchema: t.inputSchema,
    ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
    ...(a ? { annotations: { ...(a.readOnlyHint !== undefined ? { readOnlyHint: a.readOnlyHint } : {}), ...(a.destructiveHint !== undefined ? { destructiveHint: a.destructiveHint } : {}) } } : {}),
    ...(t.execution?.taskSupport === 'required' ? { taskOnly: true as const } : {}),
  };
}

export function sameListing(a: readonly McpToolInfo[], b: readonly McpToolInfo[]): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}
