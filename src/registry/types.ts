import type { JsonSchema } from '../common/json.js';
import type { Diagnostic } from '../common/errors.js';
import type { SchemaCompiler } from './schema-compiler.js';

// The narrow contract between tools and the rest of the engine. A tool is
// `{ name, parameters, returns?, handler }`; the registry compiles its validators once and hands
// out immutable snapshots, so a run keeps the tool versions it started with.

export interface ToolContext {
  /** Fires at the attempt's deadline, or when the run (or the caller) stops it. */
  readonly signal: AbortSignal;
  /** 1-based. */
  readonly attempt: number;
  readonly run_id: string;
  readonly step: string;
  log(message: string, fields?: Record<string, unknown>): void;
  /** Only the environment variables the manifest lists. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `RUN_ID:STEP`: the same for every attempt of a step, for making external effects idempotent. */
  readonly idempotencyKey: string;
  /**
   * How far the call has got (`progress` of `total`, with a message): becomes a `step:progress`
   * event of the run. Absent where nothing listens for progress.
   */
  progress?(report: ToolProgress): void;
}

/** A long call's progress, as an MCP server reports it: `progress` rises; `total` when known. */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * A tool's handler. `A` is the type of its arguments as the tool's `parameters` schema admits
 * them: the engine validates (and coerces) a copy of the arguments against the schema before the
 * handler sees them, so a handler may declare the shape it was promised.
 */
export type ToolHandler<A extends object = Record<string, unknown>, R = unknown> = (args: A, ctx: ToolContext) => R | Promise<R>;

/** What `engine.registerTool()` takes, and what a plugin manifest entry becomes. */
export interface ToolDefinition<A extends object = Record<string, unknown>> {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: JsonSchema;
  readonly returns?: JsonSchema;
  readonly handler: ToolHandler<A>;
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
  /** A result over the size limit comes back cut and marked (`truncate: true`) instead of failing. */
  readonly truncates: boolean;
  /** `tool 'plugin/name'`: how messages name it. */
  readonly describe: string;
  /** The environment variables its handler may read (the manifest's `env`), as of now. */
  env(): Readonly<Record<string, string | undefined>>;
  /**
   * Validate a copy of the arguments, with defaults filled and types coerced. Throws only a
   * ToolchainError (PLUGIN_INVALID) when the schema, compiled on first use, does not compile.
   * `fresh`: the object was made for this call and nobody else holds it (a step's resolved
   * input_map), so it is validated in place and only the objects inside it are copied.
   */
  prepare(args: Record<string, unknown>, fresh?: boolean): PrepareResult;
  /**
   * Call the handler through the tool's cache and circuit breaker and check its result (JSON,
   * size limit or truncation, `returns` schema). Rejects with a ToolchainError (RESULT_INVALID,
   * RESULT_TOO_LARGE, CIRCUIT_OPEN) or with whatever the handler threw. `ctx` is the call unit's:
   * its `env` is this tool's.
   */
  invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
  /** The same call without a promise of its own, for a tool with no cache and no circuit breaker (see DirectCall). */
  readonly direct?: DirectCall;
}

/**
 * `invoke` taken apart so that the call unit spends no promise on a handler that returns at once
 * and one reaction on one that returns a promise: `call` runs the handler and returns what it
 * returned (a value or a promise, unchecked); `check` turns a value into the result (or throws
 * RESULT_INVALID / RESULT_TOO_LARGE); `fail` turns what the handler threw into what to report.
 */
export interface DirectCall {
  call(args: Record<string, unknown>, ctx: ToolContext): unknown;
  check(result: unknown): unknown;
  fail(thrown: unknown): unknown;
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
  /** The plugin that declares a tool of this name that failed to load, and why. */
  failedTool?(name: string): InactiveProvider | undefined;
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

/**
 * How much loading work happens up front. One value, chosen where the engine is made:
 * - `eager`: validators compile when a tool is registered and plugin handlers are imported when
 *   their plugin loads, so a broken edit (a bad `$ref`, a module that throws) is reported at load
 *   and the last good version kept; strict-mode warnings appear at load. For long-running engines.
 * - `lazy`: schemas are only checked against the meta-schema at registration and compile on a
 *   tool's first call; handlers are located (escapes refused) and imported on first call, where a
 *   module that fails to load fails that call with HANDLER_LOAD. For one-shot processes
 *   (`toolchain run`) that call a few of many tools.
 * - `static`: like `lazy`, but handlers are never imported: tools can be listed and checked, and a
 *   call fails with HANDLER_LOAD. What `toolchain validate` and `list` use, so that checking a
 *   project never runs its code.
 */
export type LoadMode = 'eager' | 'lazy' | 'static';

export interface RegistryOptions {
  /** Largest result accepted, in bytes of JSON (default 1 MiB). */
  readonly resultLimitBytes?: number;
  /** Where handlers' `ctx.env` values come from (default `process.env`, read at call time). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The clock of caches and circuit breakers, in ms (default `Date.now`); tests inject one. */
  readonly now?: () => number;
  /** When validators compile (and, for the plugin host, when handlers load); default `eager`. */
  readonly load?: LoadMode;
  /** Compiles tools' schemas; default a new one of the registry's own, without a disk cache. */
  readonly schemas?: SchemaCompiler;
}

/** A plugin's tools built (validators compiled once) but not yet in the registry: see Registry.buildPluginTools. */
export interface BuiltPlugin {
  readonly plugin: string;
  readonly version: string;
  readonly env: readonly string[];
  readonly tools: readonly Tool[];
  /** Non-fatal problems, e.g. an unknown JSON Schema keyword; pointers are `/tools/<index>/…`. */
  readonly warnings: readonly Diagnostic[];
}

export type PluginBuild =
  | { readonly ok: true; readonly built: BuiltPlugin }
  /** One diagnostic per problem (PLUGIN_INVALID, DUPLICATE_NAME), pointers `/tools/<index>/…`. */
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export interface Registry {
  /** Fixed when the registry is made; the plugin host follows it too. */
  readonly load: LoadMode;
  /** The registry's schema compiler; the executor compiles chains' input schemas with it. */
  readonly schemas: SchemaCompiler;
  /**
   * Add a tool from code (qualifiedName = name) or, with `owner`, into that plugin's tools
   * (qualifiedName = `plugin/name`). Registering a name again replaces the earlier tool.
   * Throws a ToolchainError (PLUGIN_INVALID) when the definition or its schemas are invalid.
   */
  register<A extends object = Record<string, unknown>>(def: ToolDefinition<A>, owner?: ToolOwner): Tool;
  /** Remove a tool registered from code; true when there was one. */
  unregister(name: string): boolean;
  /**
   * Build a plugin's tools without installing them: each schema compiled (or, when not eager,
   * meta-checked) exactly once for this version. Never throws for a bad definition.
   */
  buildPluginTools(owner: ToolOwner, defs: readonly ToolDefinition[], options?: PluginBuildOptions): PluginBuild;
  /**
   * Swap a plugin's prebuilt tools in, in one step, replacing its earlier version (throws a
   * TypeError for a BuiltPlugin this registry did not build). Nothing is compiled here.
   */
  installPluginTools(built: BuiltPlugin): PluginToolsResult;
  /** Remove every tool of a plugin; it is then remembered as the former provider of each. */
  removePluginTools(plugin: string): void;
  /**
   * buildPluginTools then installPluginTools (`undefined` removes them). Either all definitions
   * build or nothing changes: throws a ToolchainError (PLUGIN_INVALID) with one diagnostic per bad tool.
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
  /** Remember the tools `plugin` declares that failed to load (replacing what was said before), for TOOL_NOT_FOUND. */
  setFailedTools?(plugin: string, failures: readonly { readonly name: string; readonly reason: string }[]): void;
}

export interface PluginBuildOptions {
  /**
   * Meta-check the schemas now but compile each on its tool's first call, as `lazy` does, even
   * in an eager registry: for a plugin of hundreds of generated tools (an OpenAPI document's
   * operations) of which an engine calls few, where compiling them all would take minutes.
   */
  readonly compileOnFirstCall?: boolean;
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

/**
 * `true` approves the call, `false` (or anything else) refuses it; `'wait'`: no one can decide now,
 * so the call becomes an approval request a person decides later (`toolchain approvals`), and the
 * step waits for it without holding anything.
 */
export type ApproveCallback = (req: ApprovalRequest) => boolean | 'wait' | Promise<boolean | 'wait'>;
