import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolchainError } from '../../common/errors.js';

// An MCP tools/call result → the step's output: `structuredContent` when the server sent it
// (what its outputSchema describes); otherwise the text content, parsed when it is JSON (one
// text block is that text; several are joined by newlines); a result with no text at all (images,
// resources) is its content list as the server sent it. `isError: true` is a tool error whose
// message is the server's own text, on one line, so that a model reading it can correct its call.

const MESSAGE_LIMIT = 2000;

export function mcpOutput(result: CallToolResult, tool: string): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.filter((c): c is { type: 'text'; text: string } => c.type === 'text' && typeof c.text === 'string').map((c) => c.text);
  if (result.isError === true) {
    const said = text.join(' ').replace(/\s+/g, ' ').trim();
    const cut = said.length > MESSAGE_LIMIT ? `${said.slice(0, MESSAGE_LIMIT - 3)}...` : said;
    throw new ToolchainError('TOOL_ERROR', `tool '${tool}' reported an error: ${cut || 'the server gave no reason'}`);
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  if (text.length === 0) return content;
  const joined = text.join('\n');
  return parseJson(joined) ?? joined;
}

/** The value when the text is a JSON object, array, number, boolean or null; undefined for prose. */
function parseJson(text: string): unknown {
  const t = text.trim();
  if (t === '' || !/^[[{"\-\d]|^(true|false|null)$/.test(t)) return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}
