import { cacheKey, type DiskCache } from '../../cache/disk-cache.js';
import type { McpSource } from '../manifest.generated.js';
import type { McpToolInfo } from './mcp-listing.js';

// The last listing an MCP server gave, kept in the user's cache (signed like every entry there):
// what `validate` checks a chain against, and what a plugin serves (its calls failing with
// TOOL_UNAVAILABLE) while the server cannot be reached. Keyed by the plugin folder and the
// server's configuration, so another server's list never stands in for this one's.

const KIND = 'mcp-tools';

interface Entry {
  readonly listed_at: string;
  readonly tools: readonly McpToolInfo[];
}

function keyOf(folder: string, config: McpSource): string {
  return cacheKey('mcp-tools/1', folder, JSON.stringify(config));
}

export function readListing(cache: DiskCache | undefined, folder: string, config: McpSource): Entry | undefined {
  const text = cache?.read(KIND, keyOf(folder, config));
  if (text === undefined) return undefined;
  try {
    const entry = JSON.parse(text) as Entry;
    return Array.isArray(entry.tools) && typeof entry.listed_at === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}

export function writeListing(cache: DiskCache | undefined, folder: string, config: McpSource, tools: readonly McpToolInfo[]): void {
  const entry: Entry = { listed_at: new Date().toISOString(), tools };
  cache?.write(KIND, keyOf(folder, config), JSON.stringify(entry));
}
