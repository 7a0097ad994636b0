import type { Diagnostic, ErrorCode, Severity } from '../../common/errors.js';
import type { SourceMap } from '../../loader/index.js';
import type { ToolchainPluginManifest } from '../manifest.generated.js';

// What the schema cannot say about a manifest's `source`: exactly one kind; an MCP server reached
// one way (a command or a url, with only that way's keys); `tools` entries that only adjust the
// source's tools (their handler, parameters and returns come from the server or the document);
// every environment variable a header or credential names listed in the manifest's `env`.

/** What a `tools` entry of a source plugin may say: the rest comes from the source. */
export const ADJUSTABLE = ['name', 'description', 'timeout', 'dangerous', 'truncate', 'cache', 'circuit_breaker'] as const;
const FROM_SOURCE = ['handler', 'parameters', 'returns'] as const;

/** `${NAME}` in a header value. */
export const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function checkSource(manifest: ToolchainPluginManifest, file: string, sourceMap: SourceMap): Diagnostic[] {
  const source = manifest.source;
  if (source === undefined) return [];
  const out: Diagnostic[] = [];
  const at = (pointer: string, code: ErrorCode, message: string, severity: Severity = 'error', atKey = false): void => {
    const { line, col } = atKey ? sourceMap.keyAt(pointer) : sourceMap.valueAt(pointer);
    out.push({ code, severity, message, file, pointer, line, col });
  };
  const env = new Set(manifest.env ?? []);
  const needsEnv = (pointer: string, name: string, what: string): void => {
    if (!env.has(name)) at(pointer, 'PLUGIN_INVALID', `${what} reads the environment variable ${name}, which the manifest's \`env\` must list (env: [${[...env, name].join(', ')}])`);
  };

  if (source.mcp && source.openapi) at('/source/openapi', 'PLUGIN_INVALID', "'source' names both 'mcp' and 'openapi'; a plugin has one source: split it into two plugins", 'error', true);
  if (!source.mcp && !source.openapi) at('/source', 'MISSING_KEY', "'source' needs 'mcp' (an MCP server) or 'openapi' (an OpenAPI document)");

  const mcp = source.mcp;
  if (mcp) {
    if (mcp.command === undefined && mcp.url === undefined) at('/source/mcp', 'MISSING_KEY', "'source.mcp' needs 'command' (a server started over stdio) or 'url' (a Streamable HTTP server)");
    if (mcp.command !== undefined && mcp.url !== undefined) at('/source/mcp/url', 'PLUGIN_INVALID', "'source.mcp' has both 'command' and 'url'; give one: the server is started (command) or reached (url)", 'error', true);
    if (mcp.url !== undefined) {
      for (const key of ['args', 'cwd', 'env'] as const) {
        if (mcp[key] !== undefined) at(`/source/mcp/${key}`, 'PLUGIN_INVALID', `'source.mcp.${key}' applies to a started server (command), not to one reached at a url`, 'error', true);
      }
    }
    if (mcp.command !== undefined && mcp.headers !== undefined) at('/source/mcp/headers', 'PLUGIN_INVALID', "'source.mcp.headers' applies to a server reached at a url, not to a started one", 'error', true);
    for (const [name, value] of Object.entries(mcp.headers ?? {})) {
      for (const m of value.matchAll(ENV_REFERENCE)) needsEnv(`/source/mcp/headers/${escape(name)}`, m[1]!, `header '${name}'`);
    }
    if (source.include !== undefined && !Array.isArray(source.include)) {
      at('/source/include', 'PLUGIN_INVALID', "an MCP server's tools are filtered by name: 'include' must be a list of tool names (tags and operations are OpenAPI's)");
    }
  }

  const auth = source.openapi?.auth;
  if (auth) {
    const ways = [auth.bearer_env !== undefined, auth.header !== undefined || auth.env !== undefined, auth.basic !== undefined].filter(Boolean).length;
    if (ways > 1) at('/source/openapi/auth', 'PLUGIN_INVALID', "'auth' takes one of bearer_env, header with env, or basic");
    if ((auth.header === undefined) !== (auth.env === undefined)) at('/source/openapi/auth', 'PLUGIN_INVALID', "'auth.header' and 'auth.env' go together: the header to send and the variable holding its value");
    if (auth.bearer_env !== undefined) needsEnv('/source/openapi/auth/bearer_env', auth.bearer_env, "'auth.bearer_env'");
    if (auth.env !== undefined) needsEnv('/source/openapi/auth/env', auth.env, "'auth.env'");
    if (auth.basic) {
      needsEnv('/source/openapi/auth/basic/username_env', auth.basic.username_env, "'auth.basic'");
      needsEnv('/source/openapi/auth/basic/password_env', auth.basic.password_env, "'auth.basic'");
    }
  }

  (manifest.tools ?? []).forEach((tool, index) => {
    for (const key of FROM_SOURCE) {
      if (tool[key] === undefined) continue;
      const from = mcp ? 'the MCP server' : 'the OpenAPI document';
      at(`/tools/${index}/${key}`, 'PLUGIN_INVALID', `tool '${tool.name}': '${key}' comes from ${from} in a plugin with 'source'; a tools entry here may only set ${ADJUSTABLE.slice(1).join(', ')}`, 'error', true);
    }
  });
  if (manifest.isolation !== undefined && manifest.isolation !== 'none') {
    const why = mcp ? 'an MCP server runs in a process of its own already' : "an OpenAPI plugin runs no code of its own: the engine makes the HTTP calls";
    at('/isolation', 'PLUGIN_INVALID', `'isolation' has no effect on a plugin with 'source': ${why}`, 'warning', true);
  }
  return out;
}

function escape(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
