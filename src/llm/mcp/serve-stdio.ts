import type { Readable, Writable } from 'node:stream';
import { LineTransport } from './line-transport.js';
import type { ToolchainMcpServer } from './mcp-server.js';

// The MCP server on a pair of streams (the process's stdin and stdout for `toolchain mcp`), over
// our own line transport (line-transport.ts: it answers malformed lines, batches and oversized
// messages instead of dropping them). Resolves when the client goes away: stdin ends or closes, or
// the transport closes.

export async function serveStdio(mcp: ToolchainMcpServer, stdin: Readable, stdout: Writable): Promise<void> {
  const transport = new LineTransport(stdin, stdout);
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  transport.onclose = () => closed();
  await mcp.server.connect(transport);
  await done;
  await mcp.server.close().catch(() => undefined);
}
