// Language models as callers: exporters of function definitions, parsers of the calls
// models write, and the execution of those calls through the registry. The agent step and the
// MCP server (agent/, mcp/) are built on these.

export { toOpenAITools, type OpenAITool, type OpenAIFunction, type OpenAIExportOptions } from './export/to-openai.js';
export { toAnthropicTools, type AnthropicTool } from './export/to-anthropic.js';
export { toMcpTools, type McpTool, type McpToolAnnotations } from './export/to-mcp.js';
export { selectCallables, type ExportOptions } from './export/select-callables.js';
export { exportNames, isValidFunctionName, type ExportNames, type ExportedCallable } from './export/export-names.js';
export { listCallables, type Callable, type CallableSource, type CallableTarget } from './export/callables.js';
export { toStrictSchema, type StrictConversion } from './export/strict-schema.js';
export { dropNullOptionals } from './export/null-optionals.js';

export { parseToolCalls } from './parse/parse-tool-calls.js';
export type { ParseOptions } from './parse/parse-options.js';
export { createToolCallStream, type ToolCallStream } from './parse/tool-call-stream.js';
export { registerToolCallFormat, toolCallFormats, type RegisterOptions } from './parse/format-registry.js';
export type { ToolCallFormat, FormatContext, FormatResult, FoundCall, FoundProblem, Span } from './parse/format.js';
export type { ToolDescriptor, ToolsOption, KnownTools } from './parse/known-tools.js';
export { parseLenientJson, type JsonAttempt } from './parse/lenient-json.js';
export type { ToolCall, ParseProblem, ParseProblemCode, ParseResult } from './parse/types.js';

export { executeToolCalls, type ToolCallInput } from './execute/execute-tool-calls.js';
export type { ExecuteOptions, CallRetryOptions, CallProgress, ToolCallReport } from './execute/execute-options.js';
export type { CallTargets, ChainCallOptions } from './call-targets.js';
export { DEFAULT_MAX_RESULT_CHARS, type ToolMessage } from './execute/tool-message.js';
