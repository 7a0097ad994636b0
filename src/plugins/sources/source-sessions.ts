import { McpConnection, type McpConnectionSettings } from './mcp-connection.js';

// The MCP servers a plugin host keeps running: one per plugin folder, shared by every version of
// the plugin that was built from the same server configuration (a reload after list_changed, or
// an edit to a description, keeps the server; an edit to its command starts a new one). The
// connection a folder no longer uses closes once its last plugin version is retired and its last
// call has settled. Owned by one host: nothing here is process-wide.

export interface SourceSessions {
  /** The folder's connection for this configuration: the running one, or a new one (the old one superseded). */
  mcp(folder: string, settings: McpConnectionSettings): McpConnection;
  /** The folder is gone: its connection closes once unused. */
  forget(folder: string): void;
  /** Ends every server. */
  close(): Promise<void>;
}

export function createSourceSessions(): SourceSessions {
  const byFolder = new Map<string, { readonly key: string; readonly connection: McpConnection }>();
  const all = new Set<McpConnection>();
  return {
    mcp(folder, settings) {
      const key = JSON.stringify(settings.config);
      const held = byFolder.get(folder);
      if (held?.key === key) return held.connection;
      held?.connection.supersede();
      const connection = new McpConnection(settings);
      all.add(connection);
      void connection.closed.then(() => all.delete(connection));
      byFolder.set(folder, { key, connection });
      return connection;
    },
    forget(folder) {
      byFolder.get(folder)?.connection.supersede();
      byFolder.delete(folder);
    },
    async close() {
      byFolder.clear();
      await Promise.all([...all].map((c) => c.close()));
      all.clear();
    },
  };
}
