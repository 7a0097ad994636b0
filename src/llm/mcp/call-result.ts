import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '../../common/json.js';

// A tool message (the JSON text a model reads) as an MCP `tools/call` result. Success:
// the JSON as text content, and the value as `structuredContent` (which MCP wants to be an
// object: anything else is wrapped as `{ result }`). Failure: `isError: true`, the message as
// plain text a model can act on (e.g. "Invalid arguments for tool 'find_city' (1 problem): …"),
// and — for a tool without an output schema — `{ error: { code, message } }` as structured content.

export interface CallAnswer {
  readonly content: string;
  readonly is_error: boolean;
}

/**
 * `hasOutputSchema`: the tool was listed with an `outputSchema`, which a client checks any
 * structured content against — an error's `{ error }` would not match it, so it has the text only.
 */
export function toCallToolResult(answer: CallAnswer, hasOutputSchema = false): CallToolResult {
  const value = parse(answer.content);
  if (answer.is_error) {
    const error = isRecord(value) && isRecord(value.error) ? value.error : undefined;
    const code = typeof error?.code === 'string' ? error.code : 'TOOL_ERROR';
    const message = typeof error?.message === 'string' ? error.message : answer.content;
    return { content: [{ type: 'text', text: `${code}: ${message}` }], ...(hasOutputSchema ? {} : { structuredContent: { error: { code, message } } }), isError: true };
  }
  return {
    content: [{ type: 'text', text: answer.content }],
    ...(value !== undefined ? { structuredContent: isRecord(value) ? value : { result: value } } : {}),
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

