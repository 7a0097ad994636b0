import type { Diagnostic, ErrorCode, Severity } from '../../common/errors.js';
import type { DiskCache } from '../../cache/disk-cache.js';
import type { SourceMap } from '../../loader/index.js';
import type { LoadMode, ToolDefinition } from '../../registry/types.js';
import type { ToolchainPluginManifest } from '../manifest.generated.js';
import { McpConnection } from './mcp-connection.js';
import { readListing, writeListing } from './mcp-listing-cache.js';
import type { McpToolInfo } from './mcp-listing.js';
import { mcpSourceTools } from './mcp-tools.js';
import { loadOpenApiTools } from './openapi-tools.js';
import { applyManifest, type SourceTool } from './source-tools.js';
import type { SourceSessions } from './source-sessions.js';

// A plugin whose tools come from a source → its tool definitions, the way load-plugin.ts turns
// handler modules into them. An MCP server is started (or reached) and listed; under a plugin
// host the server is the host's and keeps running, elsewhere (validate, list) it is stopped as
// soon as it has listed its tools. A server that cannot be reached leaves the plugin the tools
// it listed last time (from the user cache, with a warning; their calls fail TOOL_UNAVAILABLE
// until it is back), or no plugin when it never listed. An OpenAPI document is read and turned
// into one tool per operation; no code of the plugin runs either way.

export interface SourceLoadOptions {
  readonly mode: LoadMode;
  readonly cache?: DiskCache;
  /** The host's running servers; without it a server lives as long as this plugin version. */
  readonly sessions?: SourceSessions;
  /** Where environment values come from (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The source's tools changed (an MCP list_changed, a server back with other tools): reload the plugin. */
  readonly onSourceChanged?: () => void;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export type SourceLoad =
  | { readonly ok: true; readonly defs: readonly ToolDefinition[]; readonly toolIndex: readonly number[]; readonly warnings: readonly Diagnostic[]; readonly retire?: () => void }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export async function loadSource(manifest: ToolchainPluginManifest, file: string, sourceMap: SourceMap, realDir: string, options: SourceLoadOptions): Promise<SourceLoad> {
  const place = (pointer: string, code: ErrorCode, message: string, severity: Severity = 'error'): Diagnostic => {
    const { line, col } = sourceMap.valueAt(pointer);
    return { code, severity, message, file, pointer, line, col };
  };
  const env = options.env ?? process.env;
  let found: { tools: SourceTool[]; warnings: Diagnostic[] };
  let retire: (() => void) | undefined;
  if (manifest.source?.mcp) {
    const mcp = manifest.source.mcp;
    const settings = { plugin: manifest.name, folder: realDir, config: mcp, env, ...(options.onSourceChanged ? { onToolsChanged: options.onSourceChanged } : {}), ...(options.log ? { log: options.log } : {}) };
    const shared = options.sessions !== undefined && options.mode !== 'static';
    const connection = shared ? options.sessions!.mcp(realDir, settings) : new McpConnection(settings);
    const extra: Diagnostic[] = [];
    let listing: readonly McpToolInfo[] | undefined = connection.tools();
    let live = listing !== undefined;
    if (!listing) {
      try {
        listing = await connection.start();
        live = true;
      } catch (error) {
        const why = (error as Error).message;
        const cached = readListing(options.cache, realDir, mcp);
        connection.served(null);
        if (!cached) {
          if (!shared) void connection.close();
          return { ok: false, diagnostics: [place('/source/mcp', 'TOOL_UNAVAILABLE', `${why}; no earlier listing of its tools is cached, so the plugin has no tools until it starts`)] };
        }
        listing = cached.tools;
        extra.push(place('/source/mcp', 'TOOL_UNAVAILABLE', `${why}; checking against the tools it listed at ${cached.listed_at} (their calls fail with TOOL_UNAVAILABLE until it is back)`, 'warning'));
      }
    }
    if (live) {
      connection.served(listing);
      writeListing(options.cache, realDir, mcp, listing);
    }
    if (options.mode === 'static' && !shared) void connection.close();
    retire = shared ? connection.acquire() : () => void connection.close();
    const made = mcpSourceTools(manifest.name, listing, connection);
    found = { tools: made.tools, warnings: [...extra, ...made.warnings.map((d) => place(d.pointer ?? '/source', d.code, d.message, d.severity))] };
  } else if (manifest.source?.openapi) {
    const made = await loadOpenApiTools(manifest, realDir, env, place);
    if (!made.ok) return made;
    found = made;
  } else {
    return { ok: false, diagnostics: [place('/source', 'MISSING_KEY', "'source' needs 'mcp' or 'openapi'")] };
  }
  const applied = applyManifest(found.tools, manifest, file, sourceMap);
  return { ok: true, defs: applied.defs, toolIndex: applied.toolIndex, warnings: [...found.warnings, ...applied.warnings], ...(retire ? { retire } : {}) };
}
