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

export { main as runCli } from './cli/main.js';
export type { CliIO } from './cli/io.js';
