// The registry's public surface: tools by name, validated and guarded, in immutable snapshots.
export { createRegistry } from './create-registry.js';
export { createSchemaCompiler, type CompiledSchema, type SchemaCompiler, type SchemaCompilerOptions, type SchemaUse } from './schema-compiler.js';
export { buildTool, TOOL_NAME, type BuildSettings, type BuiltTool } from './build-tool.js';
export { toolNotFound } from './tool-not-found.js';
export { formatProblems, problemsError, toProblems, fieldLabel } from './argument-problems.js';
export { createCircuitBreaker, type CircuitBreaker, type CircuitState } from './circuit-breaker.js';
export { canonicalJson } from './canonical-json.js';
export type { TruncatedResult } from './truncate-result.js';
export type {
  ApprovalRequest,
  ApproveCallback,
  ArgumentProblem,
  BuiltPlugin,
  LoadMode,
  PluginBuild,
  PluginBuildOptions,
  PluginToolsResult,
  PrepareResult,
  Registry,
  RegistryOptions,
  Tool,
  ToolCatalogue,
  ToolContext,
  ToolDefinition,
  ToolHandler,
  ToolOwner,
  ToolProgress,
  ToolSet,
} from './types.js';
