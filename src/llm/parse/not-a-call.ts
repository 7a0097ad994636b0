import { isRecord } from '../../common/json.js';
import type { KnownTools } from './known-tools.js';

// Text that has the shape of a call without being one. Models explain tools, quote protocols and
// echo the instructions of their own chat template; a parser that took these for calls would run
// tools nobody asked for. So, unless the offered tools say otherwise:
//
//   a tool definition     {"name": "get_weather", "parameters": {"type": "object", "properties": …}}
//                         — "arguments" that are a JSON Schema are a definition in a code sample
//   a JSON-RPC envelope   {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": …}} — MCP
//                         wire traffic quoted in prose, never a request to us
//   a placeholder         the template's own example echoed back: `tool_name`, `<function-name>`,
//                         `{function-name}`, `func_name1`, `example_function_name`, `tool-name-1`

/** Names chat templates use as examples (Hermes, Llama 3.2, Gemma, Qwen3-Coder, GLM, MiniMax, ad-hoc prompts). */
const PLACEHOLDER =
  /^[<{[]?(?:(?:your|example|some)[_-]?)?(?:tool|function|func|fn)(?:[_-]?name)?(?:[_-]?\d+)?[>}\]]?$|^example[_-]function[_-]name$|^[<{](?:name|tool|function)[^<>{}]*[>}]$/i;

/**
 * Template slots: `"name": <function-name>` and `<args-json-object>` (Hermes), `{function-name}`
 * and `{arg-key-1}` (GLM): the chat template's instruction text, not a model's call.
 */
const TEMPLATE_SLOT = /["'][^"']*["']\s*:\s*<[a-z][\w-]*>|\{(?:function|tool|arg|param)[-_][\w-]*\}/i;

export function isPlaceholderName(name: string, tools: KnownTools | undefined): boolean {
  if (tools?.has(name)) return false;
  return PLACEHOLDER.test(name.trim());
}

/** True when broken call-like text is the chat template's instructions echoed back. */
export function echoesTemplate(raw: string): boolean {
  return TEMPLATE_SLOT.test(raw);
}

/** True when `args` is a JSON Schema rather than arguments, and the tool (if known) does not itself take schema-shaped arguments. */
export function isSchemaLike(args: unknown, name: string, tools: KnownTools | undefined): boolean {
  if (!isRecord(args)) return false;
  const schemaShaped = typeof args.$schema === 'string' || (args.type === 'object' && isRecord(args.properties));
  if (!schemaShaped) return false;
  const own = tools?.parameters(name)?.properties;
  return !(isRecord(own) && (Object.hasOwn(own, 'properties') || Object.hasOwn(own, 'type')));
}

/** A JSON-RPC message (MCP's `tools/call` included): not a call, and not searched for calls. */
export function isEnvelope(obj: Record<string, unknown>): boolean {
  return Object.hasOwn(obj, 'jsonrpc') || (typeof obj.method === 'string' && Object.hasOwn(obj, 'params'));
}
