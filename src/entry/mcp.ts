// `toolchain/mcp`: the engine's tools and chains as a Model Context Protocol server.

export { createMcpServer, serveStdio } from '../llm/mcp/index.js';
export type { McpServerOptions, ToolchainMcpServer } from '../llm/mcp/index.js';
