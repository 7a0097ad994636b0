import { importModule } from '../../common/import-module.js';

// The MCP SDK's client side, imported when the first MCP plugin connects: a project without one
// never loads it.

export interface McpClientModules {
  readonly Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  readonly StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  readonly StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  readonly ToolListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ToolListChangedNotificationSchema;
}

export async function loadMcpClient(): Promise<McpClientModules> {
  const [client, stdio, http, types] = await Promise.all([
    importModule<typeof import('@modelcontextprotocol/sdk/client/index.js')>('@modelcontextprotocol/sdk/client/index.js'),
    importModule<typeof import('@modelcontextprotocol/sdk/client/stdio.js')>('@modelcontextprotocol/sdk/client/stdio.js'),
    importModule<typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')>('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    importModule<typeof import('@modelcontextprotocol/sdk/types.js')>('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}
