// Generated from schemas/plugin.schema.json by `npm run gen:types`. Do not edit by hand.

/**
 * A letter or underscore, then letters, digits, underscores and hyphens.
 */
export type PluginName = string;
/**
 * An environment variable's name.
 */
export type EnvName = string;
/**
 * JSON Schema of the arguments (default: any object).
 */
export type JsonSchema = {[key: string]: unknown};
/**
 * JSON Schema of the result, checked after every call.
 */
export type JsonSchema1 = {[key: string]: unknown};

/**
 * plugin.yaml: a plugin's name, version, requirements and tools.
 */
export interface ToolchainPluginManifest {
  /**
   * The schema this file follows (for editors).
   */
  $schema?: string;
  /**
   * The plugin's name, unique across the plugins folder; tools are also reachable as name/tool.
   */
  name: string;
  /**
   * The plugin's version, in semver (1.2.0). Quote it in YAML if it could read as a number.
   */
  version: string;
  /**
   * Who wrote or maintains the plugin.
   */
  author?: string;
  /**
   * What the plugin offers.
   */
  description?: string;
  /**
   * Capabilities this plugin provides, which other plugins may require by name (at this plugin's version).
   */
  capabilities?: PluginName[];
  /**
   * Plugins or capabilities this plugin needs, each a name with an optional semver range: `text`, `text >= 1.0.0`, `text ^1.2`.
   *
   * Items: A plugin or capability name, optionally followed by a semver range.
   */
  requires?: string[];
  /**
   * The only environment variables this plugin's tools may read (ctx.env).
   */
  env?: string[];
  /**
   * Where the plugin's handlers run. none: in the engine's own thread (fastest; a handler that loops, exits or crashes takes the engine with it). worker: in a pool of worker threads (a hung call is terminated at its timeout, process.exit and crashes fail only that call, memory is bounded). process: in child processes (also contains native crashes and process-wide state). The engine's --isolation option can raise it, never lower it.
   */
  isolation?: 'none' | 'worker' | 'process';
  source?: Source;
  /**
   * The tools this plugin provides; with `source`, adjustments to the tools the source provides, by name.
   */
  tools?: Tool[];
}
/**
 * Where the tools come from instead of handler modules: an MCP server (`mcp`) or an OpenAPI document (`openapi`). `tools` entries then adjust the tools found there by name (description, timeout, dangerous, truncate, cache, circuit_breaker).
 */
export interface Source {
  mcp?: McpSource;
  openapi?: OpenapiSource;
  /**
   * Only these tools: a list of tool names (an MCP server's names; an OpenAPI document's operationIds or the tool names made from them), or, for OpenAPI, `{ tags: [...], operations: [...] }` (an operation is kept when it has one of the tags or is named).
   */
  include?:
    | string[]
    | {
        /**
         * Keep the operations that have one of these tags.
         */
        tags?: string[];
        /**
         * Keep these operations, by operationId or by the tool name made from it.
         */
        operations?: string[];
      };
  /**
   * Leave these tools out (names as in `include`).
   */
  exclude?: string[];
}
/**
 * An MCP server whose tools/list are the plugin's tools: a command started over stdio, or a Streamable HTTP url.
 */
export interface McpSource {
  /**
   * The program to start (stdio transport), found on PATH or a path relative to the plugin folder.
   */
  command?: string;
  /**
   * Its arguments.
   */
  args?: string[];
  /**
   * Environment variables the server process may see, beyond HOME, LOGNAME, PATH, SHELL, TERM and USER.
   */
  env?: EnvName[];
  /**
   * The server's working folder, relative to the plugin folder (default: the plugin folder).
   */
  cwd?: string;
  /**
   * The server's Streamable HTTP endpoint.
   */
  url?: string;
  /**
   * Headers sent with every HTTP request; `${NAME}` in a value is replaced by that environment variable, which `env` at the top of the manifest must list.
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * How long starting (or reaching) the server and listing its tools may take (default 30s).
   */
  startup_timeout?: number | string;
}
/**
 * An OpenAPI 3.0 / 3.1 or Swagger 2.0 document whose operations are the plugin's tools, one each.
 */
export interface OpenapiSource {
  /**
   * The document (JSON or YAML): a path inside the plugin folder, or an http(s) URL (fetched under the address policy).
   */
  spec: string;
  /**
   * Where requests go (default: the document's first server, or Swagger 2.0's scheme, host and basePath).
   */
  base_url?: string;
  auth?: OpenapiAuth;
  /**
   * Also make tools of deprecated operations (default false).
   */
  include_deprecated?: boolean;
  /**
   * Which operations need approval (none unless named here or in `tools`).
   */
  dangerous?: {
    /**
     * Every operation with one of these methods.
     */
    methods?: ('GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS' | 'TRACE')[];
    /**
     * These operations (operationIds or tool names).
     */
    operations?: string[];
  };
  /**
   * The largest response body accepted, in bytes (default 1048576); a larger one fails with RESPONSE_TOO_LARGE.
   */
  max_bytes?: number;
}
/**
 * Credentials from the environment, sent with every request: `bearer_env`, `header` with `env`, or `basic`. Each variable must also be listed in `env` at the top of the manifest.
 */
export interface OpenapiAuth {
  /**
   * An environment variable's name.
   */
  bearer_env?: string;
  /**
   * A header to send the value of `env` in, e.g. X-Api-Key.
   */
  header?: string;
  /**
   * An environment variable's name.
   */
  env?: string;
  /**
   * Sends `Authorization: Basic` from two variables.
   */
  basic?: {
    /**
     * An environment variable's name.
     */
    username_env: string;
    /**
     * An environment variable's name.
     */
    password_env: string;
  };
}
export interface Tool {
  /**
   * The tool's name: letters, digits, underscores and hyphens, starting with a letter or underscore.
   */
  name: string;
  /**
   * What the tool does; shown to people and to language models.
   */
  description?: string;
  /**
   * The module inside the plugin folder, optionally `#export` (default: the default export, or an export named like the tool). Default path: tools/<name>.{ts,js,mjs,cjs}.
   */
  handler?: string;
  parameters?: JsonSchema;
  returns?: JsonSchema1;
  /**
   * Default timeout of steps that call this tool.
   */
  timeout?: number | string;
  /**
   * Every call needs approval (an approve callback, --approve, or a prompt).
   */
  dangerous?: boolean;
  /**
   * Cut a result over the size limit to fit and mark it ({ truncated, original_bytes, value }) instead of failing.
   */
  truncate?: boolean;
  /**
   * Reuse results for identical arguments.
   */
  cache?: {
    /**
     * How long a result is reused.
     */
    ttl: number | string;
  };
  /**
   * Fail fast after repeated failures.
   */
  circuit_breaker?: {
    /**
     * Consecutive failures that open the circuit.
     */
    failures: number;
    /**
     * How long the circuit stays open before one trial call.
     */
    reset_after: number | string;
    /**
     * While open, answer with the last good result for the same arguments.
     */
    stale_on_open?: boolean;
  };
}
