// `toolchain mcp`: every tool and chain of an engine served over MCP.
export { createMcpServer, type McpServerOptions, type ToolchainMcpServer } from './mcp-server.js';
export { serveStdio } from './serve-stdio.js';
export { toCallToolResult, type CallAnswer } from './call-result.js';
export { isToolRun } from './tool-runs.js';
