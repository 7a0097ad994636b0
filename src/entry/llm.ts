// `toolchain/llm`: language models as callers of the engine's tools — the exporters of function
// definitions, the parsers of the calls models write (in a response or as it streams), the
// execution of those calls, and the agent loop behind agent steps.

export { toOpenAITools, toAnthropicTools, toMcpTools, exportNames, toStrictSchema, dropNullOptionals } from '../llm/index.js';
export { parseToolCalls, createToolCallStream, registerToolCallFormat, toolCallFormats } from '../llm/index.js';
export { executeToolCalls, DEFAULT_MAX_RESULT_CHARS } from '../llm/index.js';
export type {
  OpenAITool,
  OpenAIFunction,
  OpenAIExportOptions,
  AnthropicTool,
  McpTool,
  McpToolAnnotations,
  ExportOptions,
  ExportNames,
  ExportedCallable,
  Callable,
  CallableSource,
  StrictConversion,
  ToolCall,
  ParseProblem,
  ParseProblemCode,
  ParseResult,
  ParseOptions,
  ToolCallStream,
  RegisterOptions,
  ToolCallFormat,
  FormatContext,
  FormatResult,
  FoundCall,
  FoundProblem,
  Span,
  ToolDescriptor,
  ToolsOption,
  KnownTools,
  CallTargets,
  ChainCallOptions,
  CallProgress,
  ToolCallInput,
  ExecuteOptions,
  CallRetryOptions,
  ToolCallReport,
  ToolMessage,
} from '../llm/index.js';
export { runAgent, ModelError } from '../llm/agent/index.js';
export type {
  ModelErrorCode,
  AgentOutput,
  AgentStopReason,
  AgentTurn,
  AgentToolCall,
  TextCallsNote,
  AgentHost,
  AgentPlan,
  ChatMessage,
  TokenUsage,
} from '../llm/agent/index.js';
