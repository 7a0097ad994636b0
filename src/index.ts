// The public entry of the package: the engine, chains, errors and the types they take and
// return. The rest is in subpaths — toolchain/llm, toolchain/mcp, toolchain/serve,
// toolchain/store, toolchain/testing, toolchain/observe, and toolchain/plugin for handlers —
// so that this list stays one an application can learn. docs/reference/api.md is generated
// from these entries and checked by the tests: a change to it is a change to the API.

export { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
export type { RunStartOptions } from './runs/start-options.js';
export type { RerunOptions, RerunRequest } from './runs/rerun.js';
export type { TriggerEvent } from './triggers/scheduler.js';
export type { TriggerUpdate, TriggerView } from './triggers/views.js';
export type { PauseRequest } from './triggers/controls.js';
export type { EngineTriggerControls } from './engine/engine-triggers.js';
export type { WebhookDelivery, WebhookEndpoint, WebhookReceipt } from './triggers/webhooks.js';
export type { RecoveryEvent } from './runs/recovery.js';
export { createWorker, type WorkerOptions, type ToolchainWorker } from './engine/worker.js';
export type { QueueWorkerOptions } from './queue/worker.js';
export type { Submission } from './queue/submit.js';

export { compileChain, loadChain, compileChainSet, loadChainSet, createCompileCache } from './compiler/index.js';
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
  TriggerKind,
  TriggerPlan,
  WebhookPlan,
  RetryPolicy,
  BackoffPolicy,
  FallbackPolicy,
  ChainFlow,
  ChainSignature,
  Signatures,
  ToolSignature,
} from './compiler/index.js';
export type { JsonSchema, JsonValue } from './common/json.js';

export { ToolchainError, HandlerError, ERROR_KINDS, isErrorCode, failureCode, formatDiagnostic, hasErrors } from './common/errors.js';
export type { Diagnostic, ErrorCode, ErrorKind, FailureCode, HandlerCode, StepError, Severity } from './common/errors.js';

export { compilePath, compileCondition, parseDuration } from './expr/index.js';
export type { CompiledPath, CompiledCondition, Getter, PathRef, RunContext } from './expr/types.js';

export { createRegistry } from './registry/index.js';
export type { Registry, RegistryOptions, LoadMode, ApproveCallback, ApprovalRequest } from './registry/index.js';
export { createPluginHost } from './plugins/index.js';
export type { PluginHost, PluginHostOptions, PluginStatus, PluginEvent, PluginState, IsolationLevel, IsolationOptions } from './plugins/index.js';
export type { ToolContext, ToolProgress, ToolDefinition, ToolHandler, ToolSet, ToolCatalogue, ArgumentProblem, PrepareResult } from './registry/types.js';

export { systemClock, type Clock } from './executor/index.js';
export type { RunOptions, StepMocks } from './executor/index.js';
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
  StepRoundEvent,
  StepSucceededEvent,
  StepFailedEvent,
  StepSkippedEvent,
  StepFinishedEvent,
  StepEvent,
  ForEachProgress,
  LogEntry,
} from './run-model/events.js';
export type { RunError, RunResult, StepSummary } from './run-model/result.js';
export type { StepRecord, StepStatus } from './run-model/step-record.js';

export { chainGraph, type ChainGraph, type GraphNode, type GraphEdge } from './graph/chain-graph.js';
