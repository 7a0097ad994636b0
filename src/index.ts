// The public entry of the package: explicit named exports only.

export {
  ToolchainError,
  didYouMean,
  closestNames,
  formatDiagnostic,
  hasErrors,
  type Diagnostic,
  type DiagnosticCode,
  type Severity,
} from './errors.js';

export { DEFAULT_LOAD_LIMITS, parseYaml, loadYamlFile, readTextFile } from './loader/index.js';
export type { LoadedYaml, LoadLimits, LoadResult, SourceMap, SourcePosition } from './loader/index.js';

export {
  compileChain,
  loadChain,
  compileChainSet,
  loadChainSet,
  readChainSources,
  readChainFiles,
  clearCompileCache,
} from './compiler/index.js';
export type {
  CompileOptions,
  CompileResult,
  NameCatalogue,
  ChainSet,
  ChainSource,
  CompiledFile,
  TargetRef,
  ChainFile,
  ChainPlan,
  ChainInputs,
  PlanStep,
  RetryPolicy,
  BackoffPolicy,
  FallbackPolicy,
  JsonSchema,
} from './compiler/index.js';

export { compilePath, compileValue, compileCondition, parseDuration, ExprSyntaxError } from './expr/index.js';
export type { CompiledPath, CompiledValue, CompiledCondition, Getter, PathRef, RunContext, ExprProblem } from './expr/types.js';

export { createEngine, type Engine, type EngineOptions } from './engine.js';
export { systemClock, type Clock } from './executor/index.js';
export type {
  RunEvent,
  RunEventType,
  AgentEvent,
  AgentTurnEvent,
  AgentToolCallEvent,
  RunStartedEvent,
  RunFinishedEvent,
  StepStartedEvent,
  StepRetryingEvent,
  StepSucceededEvent,
  StepFailedEvent,
  StepSkippedEvent,
  StepFinishedEvent,
  StepRecord,
  StepStatus,
  StepError,
  RunError,
  RunOptions,
  RunResult,
  StepSummary,
  LogEntry,
} from './executor/index.js';

export { createRegistry } from './registry/index.js';
export type { Registry, RegistryOptions, ApproveCallback, ApprovalRequest } from './registry/index.js';
export { createPluginHost } from './plugins/index.js';
export type { PluginHost, PluginHostOptions, PluginStatus, PluginEvent, PluginState } from './plugins/index.js';
export type {
  Tool,
  ToolContext,
  ToolDefinition,
  ToolHandler,
  ToolSet,
  ToolCatalogue,
  ArgumentProblem,
  PrepareResult,
} from './registry/types.js';

export {
  toOpenAITools,
  toAnthropicTools,
  toMcpTools,
  exportNames,
  toStrictSchema,
  dropNullOptionals,
  parseToolCalls,
  createToolCallStream,
  registerToolCallFormat,
  toolCallFormats,
  parseLenientJson,
  executeToolCalls,
  DEFAULT_MAX_RESULT_CHARS,
} from './llm/index.js';
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
  JsonAttempt,
  ExecutionEngine,
  ToolCallInput,
  ExecuteOptions,
  CallRetryOptions,
  ToolCallReport,
  ToolMessage,
} from './llm/index.js';
export { runAgent, ModelError } from './llm/agent/index.js';
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
} from './llm/agent/index.js';
export { createMcpServer, serveStdio, toCallToolResult } from './llm/mcp/index.js';
export type { McpServerOptions, ToolchainMcpServer } from './llm/mcp/index.js';

export { main as runCli } from './cli/main.js';
export type { CliIO } from './cli/io.js';
