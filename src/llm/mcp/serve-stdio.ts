import type { Readable, Writable } from 'node:stream';
import type { ToolchainMcpServer } from './mcp-server.js';
import { importModule } from '../../common/import-module.js';

// The MCP server on a pair of streams (the process's stdin and stdout for `toolchain mcp`).
// Resolves when the client goes away: stdin ends or closes (the SDK's stdio transport does not
// watch for that itself), or the transport closes.

export async function serveStdio(mcp: ToolchainMcpServer, stdin: Readable, stdout: Writable): Promise<void> {
  // Imported on use, like the server itself (see createMcpServer).
  const { StdioServerTransport } = await importModule<typeof import('@modelcontextprotocol/sdk/server/stdio.js')>('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport(stdin, stdout);
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  transport.onclose = () => closed();
  const onEnd = (): void => void mcp.server.close().finally(closed);
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  await mcp.server.connect(transport);
  try {
    await done;
  } finally {
    stdin.off('end', onEnd);
    stdin.off('close', onEnd);
  }
}
