import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { LogEntry } from '../../executor/types.js';
import type { ApproveCallback } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import { executeToolCalls } from '../execute/execute-tool-calls.js';
import { toCallToolResult } from './call-result.js';
import { currentToolList } from './list-signature.js';
import { importModule } from '../../common/import-module.js';

// Every tool and chain served over MCP. `tools/list` is the MCP export of the engine at
// the moment of asking (toMcpTools); `tools/call` goes through executeToolCalls, so a client gets
// the registry's validation, timeouts, approval and circuit breakers, and every failure as an
// `isError` result in words a model can act on — a call never becomes a protocol error. A client's
// cancellation aborts the call. `refresh()` is called on hot reload and tells clients when the
// list they would get has changed.

export interface McpServerOptions {
  /** Asked before each call of a dangerous tool; without it such calls are refused (APPROVAL_DENIED). */
  readonly approve?: ApproveCallback;
  /** Tools' `ctx.log()` lines. */
  readonly log?: (entry: LogEntry) => void;
  /** Server name and version announced in `initialize`. */
  readonly name?: string;
  readonly version?: string;
}

export interface ToolchainMcpServer {
  readonly server: Server;
  /** Compares the tool list with the last one announced; sends `notifications/tools/list_changed` when it differs. Resolves whether or not it sent. */
  refresh(): Promise<boolean>;
}

/**
 * The SDK is imported here, when a server is made, not when this module loads: the CLI bundles
 * every command, and loading the SDK would cost every other command's start-up.
 */
export async function createMcpServer(engine: CallTargets, options: McpServerOptions = {}): Promise<ToolchainMcpServer> {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    importModule<typeof import('@modelcontextprotocol/sdk/server/index.js')>('@modelcontextprotocol/sdk/server/index.js'),
    importModule<typeof import('@modelcontextprotocol/sdk/types.js')>('@modelcontextprotocol/sdk/types.js'),
  ]);
  const server = new Server(
    { name: options.name ?? 'toolchain', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: 'Tools and chains of a toolchain engine. A chain is a tool whose parameters are its inputs. Invalid arguments come back as an error result that says which field is wrong and what it expects.',
    },
  );
  let announced = currentToolList(engine).signature;
  let calls = 0;
  /** Names listed with an outputSchema in the last answer to tools/list: what the client checks results against. */
  let withOutput = new Set<string>();

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const list = currentToolList(engine);
    announced = list.signature;
    withOutput = new Set(list.tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name));
    return { tools: list.tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const [answer] = await executeToolCalls(engine, [{ id: `mcp_${++calls}`, name, arguments: args ?? {} }], {
      signal: extra.signal,
      ...(options.approve ? { approve: options.approve } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    return toCallToolResult(answer!, withOutput.has(name));
  });

  return {
    server,
    async refresh() {
      const { signature } = currentToolList(engine);
      if (signature === announced) return false;
      announced = signature;
      // Before a client has connected there is nobody to tell; it will list when it connects.
      if (server.transport === undefined) return false;
      await server.sendToolListChanged();
      return true;
    },
  };
}
