import { isAbsolute, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolchainError } from '../../common/errors.js';
import { raceTimeout } from '../../common/race.js';
import { parseDuration } from '../../expr/duration.js';
import { packageVersion } from '../../schemas/schema-files.js';
import type { ToolProgress } from '../../registry/types.js';
import type { McpSource } from '../manifest.generated.js';
import { loadMcpClient } from './mcp-client-modules.js';
import { ENV_REFERENCE } from './check-source.js';
import { listAllTools, sameListing, type McpToolInfo } from './mcp-listing.js';

// One MCP server as the engine's client: started (stdio) or reached (Streamable HTTP) once per
// plugin and shared by every run. Its tools come from tools/list, every page; a
// notifications/tools/list_changed lists them again and, when they changed, tells the owner
// (the plugin reloads; runs already going keep the tools they started with). When the server
// exits or cannot be reached it is started or reached again with backoff, and calls fail at once
// with TOOL_UNAVAILABLE meanwhile (a call cut off by the exit fails the same way). A call's
// signal (the step's timeout, a cancelled run) is the SDK's request signal: aborting it sends
// notifications/cancelled. A connection whose plugin version was replaced closes once the last
// version holding it is retired and its last call has settled.

export interface McpConnectionSettings {
  /** The plugin's name, for messages. */
  readonly plugin: string;
  /** The plugin folder (real path): relative commands and cwd start here. */
  readonly folder: string;
  readonly config: McpSource;
  /** Where environment values come from (the engine's env). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Told when the server's tool list changed (list_changed, or a different list after a restart). */
  readonly onToolsChanged?: () => void;
  /** The server's stderr lines and the connection's own news. */
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

type State = 'starting' | 'ready' | 'down' | 'closed';

const DEFAULT_STARTUP_MS = 30_000;
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 30_000;
/** The SDK's per-request timer: the step's own timeout governs, through the signal. */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;
const STDERR_KEPT = 5;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET']);

export class McpConnection {
  private state: State = 'starting';
  private client: Client | undefined;
  private listing: readonly McpToolInfo[] | undefined;
  private pending: Promise<readonly McpToolInfo[]> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private problem = '';
  private readonly stderr: string[] = [];
  private inFlight = 0;
  /** What the newest plugin version was built from: undefined before one was, null when built without a live listing. */
  private servedListing: readonly McpToolInfo[] | null | undefined;
  private refs = 0;
  private superseded = false;

  private markClosed: () => void = () => undefined;
  /** Settles once the connection has closed for good. */
  readonly closed: Promise<void> = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });

  constructor(private readonly settings: McpConnectionSettings) {}

  /** The latest listing, once the server has answered once. */
  tools(): readonly McpToolInfo[] | undefined {
    return this.listing;
  }

  /** A plugin version was built from this listing (null: from none, the server being down). */
  served(listing: readonly McpToolInfo[] | null): void {
    this.servedListing = listing;
  }

  /** Why the server is not serving, when it is not. */
  whyDown(): string | undefined {
    return this.state === 'ready' ? undefined : this.problem || 'it is starting';
  }

  /** Starts (or reaches) the server and lists its tools; the same promise while a start is under way. */
  start(): Promise<readonly McpToolInfo[]> {
    if (this.state === 'ready' && this.listing) return Promise.resolve(this.listing);
    if (this.state === 'closed') return Promise.reject(this.unavailable());
    this.pending ??= this.connect().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** A plugin version holds the connection; the function lets it go (once). */
  acquire(): () => void {
    this.refs += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.refs -= 1;
      this.closeIfUnused();
    };
  }

  /** A newer connection serves the plugin now: close once nothing holds this one. */
  supersede(): void {
    this.superseded = true;
    this.closeIfUnused();
  }

  async call(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (p: ToolProgress) => void): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== 'ready' || !client) throw this.unavailable();
    this.inFlight += 1;
    try {
      const options = { signal, timeout: NO_SDK_TIMEOUT_MS, ...(onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: true } : {}) };
      return (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (this.client !== client || isConnectionLoss(error)) {
        this.lost(client, describe(error));
        throw this.unavailable();
      }
      throw new ToolchainError('TOOL_ERROR', `the MCP server of plugin '${this.settings.plugin}' refused the call to '${name}': ${describe(error)}`);
    } finally {
      this.inFlight -= 1;
      this.closeIfUnused();
    }
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.problem = 'the plugin was unloaded';
    this.markClosed();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private unavailable(): ToolchainError {
    return new ToolchainError('TOOL_UNAVAILABLE', `the MCP server of plugin '${this.settings.plugin}' is not available (${this.whyDown() ?? 'it is starting'}); it is being restarted, try again shortly`);
  }

  private closeIfUnused(): void {
    if (this.superseded && this.refs === 0 && this.inFlight === 0) void this.close();
  }

  private async connect(): Promise<readonly McpToolInfo[]> {
    const { config, plugin } = this.settings;
    const startupMs = (config.startup_timeout !== undefined ? parseDuration(config.startup_timeout) : undefined) ?? DEFAULT_STARTUP_MS;
    const sdk = await loadMcpClient();
    // The client declares no capabilities because it has none of them: it answers no roots/list
    // (roots), runs no model for the server (sampling), asks nobody for input mid-call
    // (elicitation) and does not run calls as tasks. A server that offers tools only to clients
    // with one of those (server-everything's get-roots-list, trigger-sampling-request,
    // trigger-elicitation-request) lists them to other clients, not to this one.
    const client = new sdk.Client({ name: 'toolchain', version: packageVersion() }, { capabilities: {} });
    client.onclose = () => this.lost(client, this.exitReason());
    client.onerror = () => undefined; // transport hiccups; a real loss arrives as onclose or a failed call
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void this.relist(client));
    let transport;
    if (config.command !== undefined) {
      const stdio = new sdk.StdioClientTransport({
        command: isRelativePath(config.command) ? resolve(this.settings.folder, config.command) : config.command,
        args: config.args ?? [],
        env: this.serverEnv(),
        cwd: resolve(this.settings.folder, config.cwd ?? '.'),
        stderr: 'pipe',
      });
      stdio.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk));
      transport = stdio;
    } else {
      transport = new sdk.StreamableHTTPClientTransport(new URL(config.url!), { requestInit: { headers: this.headers() } });
    }
    this.stderr.length = 0;
    try {
      const work = (async () => {
        await client.connect(transport);
        return listAllTools(client);
      })();
      const listing = await raceTimeout(work, startupMs, () => new Error(`it did not start and list its tools within ${startupMs / 1000}s`));
      if (this.state === 'closed') {
        await client.close().catch(() => undefined);
        throw this.unavailable();
      }
      this.client = client;
      this.state = 'ready';
      this.failures = 0;
      this.problem = '';
      this.accept(listing);
      return listing;
    } catch (error) {
      await client.close().catch(() => undefined);
      if (this.state === 'closed') throw this.unavailable();
      this.problem = `${plugin}: ${describe(error)}${this.stderrTail()}`;
      this.state = 'down';
      this.scheduleReconnect();
      throw new ToolchainError('TOOL_UNAVAILABLE', `the MCP server could not be ${config.command !== undefined ? 'started' : 'reached'}: ${describe(error)}${this.stderrTail()}`);
    }
  }

  /** A new listing: kept, and the owner told when it differs from what the plugin was built from. */
  private accept(listing: readonly McpToolInfo[]): void {
    this.listing = listing;
    const served = this.servedListing;
    if (served === undefined || (served !== null && sameListing(served, listing))) return;
    this.settings.onToolsChanged?.();
  }

  private async relist(client: Client): Promise<void> {
    try {
      const listing = await listAllTools(client);
      if (this.client === client) this.accept(listing);
    } catch {
      // The next list_changed, or a restart, lists again.
    }
  }

  private lost(client: Client, why: string): void {
    if (this.client !== client || this.state === 'closed') return;
    this.client = undefined;
    this.state = 'down';
    this.problem = why;
    this.settings.log?.(`MCP server of plugin '${this.settings.plugin}' is down: ${why}`, { plugin: this.settings.plugin });
    void client.close().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed' || this.timer) return;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.failures);
    this.failures += 1;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start().catch(() => undefined);
    }, delay);
    this.timer.unref();
  }

  private serverEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const name of this.settings.config.env ?? []) {
      const value = this.settings.env[name];
      if (value !== undefined) env[name] = value;
    }
    return env;
  }

  private headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.settings.config.headers ?? {})) {
      out[name] = value.replace(ENV_REFERENCE, (_m, v: string) => this.settings.env[v] ?? '');
    }
    return out;
  }

  private onStderr(chunk: Buffer): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      const text = line.trim();
      if (text === '') continue;
      this.stderr.push(text.length > 300 ? `${text.slice(0, 297)}...` : text);
      if (this.stderr.length > STDERR_KEPT) this.stderr.shift();
      this.settings.log?.(text, { plugin: this.settings.plugin, stream: 'stderr' });
    }
  }

  private exitReason(): string {
    return `its process ended${this.stderrTail()}`;
  }

  private stderrTail(): string {
    const last = this.stderr.at(-1);
    return last ? ` (it said: ${last})` : '';
  }
}

function isRelativePath(command: string): boolean {
  return !isAbsolute(command) && (command.startsWith('./') || command.startsWith('../'));
}

function describe(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  // The SDK's StreamableHTTPError keeps the HTTP status in `code` and only the body in its message.
  const status = (error as { code?: unknown } | null)?.code;
  return typeof status === 'number' && status >= 400 && status < 600 && text.startsWith('Streamable HTTP error') ? `${text} (HTTP ${status})` : text;
}

function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (e?.code === -32000) return true; // the SDK's ConnectionClosed
  const code = typeof e?.cause?.code === 'string' ? e.cause.code : typeof e?.code === 'string' ? e.code : '';
  return NETWORK_CODES.has(code) || (error instanceof TypeError && /fetch failed/.test(error.message));
}
