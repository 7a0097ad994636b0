import type { JsonSchema } from '../compiler/plan.js';
import type { Diagnostic } from '../errors.js';

// The narrow contract between tools and the rest of the engine. A tool is
// `{ name, parameters, returns?, handler }`; the registry compiles its validators once and hands
// out immutable snapshots, so a run keeps the tool versions it started with.

export interface ToolContext {
  readonly signal: AbortSignal;
  /** 1-based. */
  readonly attempt: number;
  readonly run_id: string;
  readonly step: string;
  log(message: string, fields?: Record<string, unknown>): void;
  /** Only the environment variables the manifest lists. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export type ToolHandler = (args: Record<string, unknown>, ctx: ToolContext) => unknown;

/** What `engine.registerTool()` takes, and what a plugin manifest entry becomes. */
export interface ToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: JsonSchema;
  readonly returns?: JsonSchema;
  readonly handler: ToolHandler;
  readonly timeout?: number | string;
  readonly dangerous?: boolean;
  readonly truncate?: boolean;
  readonly cache?: { readonly ttl: number | string };
  readonly circuit_breaker?: { readonly failures: number; readonly reset_after: number | string; readonly stale_on_open?: boolean };
  readonly env?: readonly string[];
}

/** One problem with a tool call's arguments, worded so that a language model can fix its call. */
export interface ArgumentProblem {
  /** JSON pointer of the field ('' for the arguments object itself). */
  readonly path: string;
  readonly message: string;
  /** What was expected, e.g. 'integer', 'one of "metric", "imperial"'. */
  readonly expected?: string;
  readonly allowed?: readonly unknown[];
}

export type PrepareResult =
  | { readonly ok: true; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly problems: readonly ArgumentProblem[] };

export interface Tool {
  /** The bare name (`find_city`). */
  readonly name: string;
  /** `plugin/name` for plugin tools, the bare name for tools registered from code. */
  readonly qualifiedName: string;
  readonly plugin?: string;
  readonly version: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly returns?: JsonSchema;
  readonly timeoutMs?: number;
  readonly dangerous: boolean;
  /** Validate a copy of the arguments, with defaults filled and types coerced. Never throws. */
  prepare(args: Record<string, unknown>): PrepareResult;
  /**
   * Call the handler through the tool's cache and circuit breaker and check its result (JSON,
   * size limit or truncation, `returns` schema). Rejects with a ToolchainError whose code says why
   * (TOOL_ERROR, RESULT_INVALID, RESULT_TOO_LARGE, CIRCUIT_OPEN, or the handler's own string `code`).
   */
  invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** A plugin that is loaded but inactive, for TOOL_NOT_FOUND messages about its tools. */
export interface InactiveProvider {
  readonly plugin: string;
  /** Why, in one sentence: the unmet requirement or the cycle. */
  readonly reason: string;
}

/** Names the compiler checks `tool:` against. */
export interface ToolCatalogue {
  has(name: string): boolean;
  names(): Iterable<string>;
}

/** An immutable view of the registry at one moment; a run holds one for its whole life. */
export interface ToolSet extends ToolCatalogue {
  /** Increases on every change to the registry. */
  readonly version: number;
  /** By bare name or `plugin/name`. */
  get(name: string): Tool | undefined;
  /** The plugin that provided a tool that is gone now, for TOOL_NOT_FOUND messages. */
  formerProvider(name: string): string | undefined;
  /** The inactive plugin that has a tool of this name, and why it is inactive (an unmet `requires`). */
  inactiveProvider?(name: string): InactiveProvider | undefined;
  /** Every tool once, code tools first, then plugins in the order they were first registered. */
  tools(): readonly Tool[];
  /** Warnings about the set as a whole, e.g. a bare name two plugins provide (NAME_COLLISION). */
  readonly warnings: readonly Diagnostic[];
}

// ---------------------------------------------------------------------------------------------
// The registry: the one mutable place tools live. Everything else sees immutable ToolSets.

/** Who provides a tool: a plugin (name and version) and the environment variables it may read. */
export interface ToolOwner {
  readonly plugin: string;
  readonly version: string;
  /** The manifest's `env` list; merged with the definition's own `env`. */
  readonly env?: readonly string[];
}

export interface RegistryOptions {
  /** Largest result accepted, in bytes of JSON (default 1 MiB). */
  readonly resultLimitBytes?: number;
  /** Where handlers' `ctx.env` values come from (default `process.env`, read at call time). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The clock of caches and circuit breakers, in ms (default `Date.now`); tests inject one. */
  readonly now?: () => number;
  /**
   * Compile a tool's validators on its first call instead of when it is registered (schemas are
   * still checked against the meta-schema up front). For one-shot processes such as `toolchain
   * run`, which call a few of many tools: compiling costs milliseconds per schema. Default false,
   * which also reports strict-mode warnings (unknown keywords) at load time.
   */
  readonly lazySchemas?: boolean;
}

export interface Registry {
  /**
   * Add a tool from code (qualifiedName = name) or, with `owner`, into that plugin's tools
   * (qualifiedName = `plugin/name`). Registering a name again replaces the earlier tool.
   * Throws a ToolchainError (PLUGIN_INVALID) when the definition or its schemas are invalid.
   */
  register(def: ToolDefinition, owner?: ToolOwner): Tool;
  /** Remove a tool registered from code; true when there was one. */
  unregister(name: string): boolean;
  /**
   * Replace every tool of a plugin in one step (`undefined` removes them, and the plugin is then
   * remembered as the former provider of each). Either all definitions build or nothing changes:
   * throws a ToolchainError (PLUGIN_INVALID) with one diagnostic per bad tool.
   */
  setPluginTools(
    plugin: string,
    version: string,
    defs: readonly ToolDefinition[] | undefined,
    env?: readonly string[],
  ): PluginToolsResult;
  /** The current immutable snapshot; the same object until something changes. */
  current(): ToolSet;
  /** Called after every change with the new snapshot; returns an unsubscribe function. */
  onChange(listener: (tools: ToolSet) => void): () => void;
  /**
   * Remember that `plugin`, with these tool names, is loaded but inactive and why (`reason`
   * undefined: it is not inactive any more), so that TOOL_NOT_FOUND can say so.
   */
  setInactive?(plugin: string, tools: readonly string[], reason: string | undefined): void;
}

export interface PluginToolsResult {
  readonly tools: readonly Tool[];
  /** Non-fatal problems, e.g. an unknown JSON Schema keyword; pointers are `/tools/<index>/…`. */
  readonly warnings: readonly Diagnostic[];
}

/** What an `approve` callback is asked. */
export interface ApprovalRequest {
  /** The tool's qualified name (`plugin/name`, or the bare name for tools from code). */
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly step: string;
  readonly run_id: string;
}

export type ApproveCallback = (req: ApprovalRequest) => boolean | Promise<boolean>;
