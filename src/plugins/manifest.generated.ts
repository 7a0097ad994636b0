// Generated from schemas/plugin.schema.json by `npm run gen:types`. Do not edit by hand.

/**
 * A letter or underscore, then letters, digits, underscores and hyphens.
 */
export type PluginName = string;
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
  /**
   * The tools this plugin provides.
   */
  tools?: Tool[];
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
