// The public entry of the package: explicit named exports only.

export {
  ToolchainError,
  HandlerError,
  ERROR_KINDS,
  isErrorCode,
  failureCode,
  didYouMean,
  closestNames,
  formatDiagnostic,
  hasErrors,
  type Diagnostic,
  type ErrorCode,
  type ErrorKind,
  type FailureCode,
  type HandlerCode,
  type StepError,
  type Severity,
} from './common/errors.js';

export { DEFAULT_LOAD_LIMITS, parseYaml, loadYamlFile, readTextFile } from './loader/index.js';
export type { LoadedYaml, LoadLimits, LoadResult, SourceMap, SourcePosition } from './loader/index.js';

export {
  compileChain,
  loadChain,
  compileChainSet,
  loadChainSet,
  readChainSources,
  readChainFiles,
  createCompileCache,
  inferOutputs,
  chainSignatures,
  MAX_SUBCHAIN_DEPTH,
} from './compiler/index.js';
export type {
  CompileCache,
  CompileCacheOptions,
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
  ChainFlow,
  ChainSignature,
  Signatures,
  ToolSignature,
} from './compiler/index.js';
export type { JsonSchema, JsonValue } from './common/json.js';

export { compilePath, compileValue, compileCondition, parseDuration, ExprSyntaxError } from './expr/index.js';
export type { CompiledPath, CompiledValue, CompiledCondition, Getter, PathRef, RunContext, ExprProblem } from './expr/types.js';

export { createEngine, type Engine, type EngineOptions } from './engine.js';
export { createWorker, type WorkerOptions, type ToolchainWorker } from './worker.js';
export type { QueueWorkerOptions } from './queue/worker.js';
export type { Submission } from './queue/submit.js';
export { systemClock, type Clock } from './executor/index.js';
export { callForOutcome, type Callee, type CallOutcome, type CallSite, type CallOwner, type RetryReport, type FallbackKind } from './call/index.js';
export type {
  RunEvent,
  RunEventType,
  AgentEvent,
  AgentTurnEvent,
  AgentToolCallEvent,
  RunStartedEvent,
  RunFinishedEvent,
  StepStartedEvent,
  StepProgressEvent,
  StepRetryingEvent,
  StepSucceededEvent,
  StepFailedEvent,
  StepSkippedEvent,
  StepFinishedEvent,
  StepRecord,
  StepStatus,
  StepEvent,
  RunError,
  RunOptions,
  ForEachProgress,
  StepMocks,
  RunResult,
  StepSummary,
  LogEntry,
} from './executor/index.js';

export { openUserCache, openDiskCache, userCacheDir } from './cache/index.js';
export type { DiskCache, OpenDiskCacheOptions, OpenUserCacheOptions, CacheEnv } from './cache/index.js';

export { createRegistry, createSchemaCompiler } from './registry/index.js';
export type {
  Registry,
  RegistryOptions,
  LoadMode,
  BuiltPlugin,
  PluginBuild,
  PluginBuildOptions,
  PluginToolsResult,
  SchemaCompiler,
  SchemaCompilerOptions,
  SchemaUse,
  CompiledSchema,
  ApproveCallback,
  ApprovalRequest,
} from './registry/index.js';
export { createPluginHost } from './plugins/index.js';
export type { PluginHost, PluginHostOptions, PluginStatus, PluginEvent, PluginState, IsolationLevel, IsolationOptions } from './plugins/index.js';
export type {
  ToolContext,
  ToolProgress,
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
  CallTargets,
  ChainCallOptions,
  CallProgress,
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

// `toolchain serve` and observability (issue 12): the HTTP server for embedding, the run service
// contract it reads runs through, and the observer (metrics, logs, traces) fed by run events.
export { createServer } from './serve/load-server.js';
export { createMemoryRunService } from './serve/memory-run-service.js';
export { ServiceError } from './serve/run-service.js';
export type { ServerOptions, ListenOptions, ToolchainServer } from './serve/create-server.js';
export type {
  MemoryRunServiceOptions,
  RunService,
  RunStatus,
  RunSummary,
  RunDetail,
  StepDetail,
  AttemptRecord,
  StartOptions,
  StartOutcome,
  ListQuery,
} from './serve/index.js';
export { createObserver, createRunMetrics, createRunLogger, createRunTracer, createBatchedDestination, STEP_DURATION_BUCKETS } from './observe/index.js';
export type { Observer, ObserverOptions, RunMetrics, RunLogger, RunTracer, BatchedDestination, PlanSource } from './observe/index.js';
export { chainGraph, type ChainGraph, type GraphNode, type GraphEdge } from './graph/chain-graph.js';

export { testChain, loadTestFile, parseTestFile, stepMocks, mockCallee } from './testing/index.js';
export type { CaseResult, SuiteResult, TestChainOptions, TestTarget, TestSuite, TestCase, MockSpec, MockResult, Mismatch } from './testing/index.js';
