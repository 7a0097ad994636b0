import type { FormatContext, FormatResult, ToolCallFormat } from '../format.js';
import { newFound } from '../json-calls.js';
import { findTag, tagValue, widen } from './xml-tags.js';

// Anthropic's legacy prompt-based tool use (Claude 2.1 / Claude 3 before the tools API), still
// written by models prompted with it: the name and each parameter as their own tags.
//
//   <function_calls>
//   <invoke>
//   <tool_name>get_weather</tool_name>
//   <parameters>
//   <city>Paris</city>
//   <days>3</days>
//   </parameters>
//   </invoke>
//   </function_calls>
//
// Values are text, typed by the parameter's schema when the tools are known.
// Source: Anthropic, "Legacy tool use" (docs.anthropic.com, tool use with Claude 2.1) and the
// anthropic-tools SDK's `function_calls` prompt constructor.

const INVOKE = /<invoke>/g;
const INVOKE_END = /<\/invoke>/g;
const TOOL_NAME = /^\s*<tool_name>([\s\S]*?)<\/tool_name>/;
const PARAMETERS = /<parameters>([\s\S]*?)(?:<\/parameters>|$)/;
const CHILD = /<([A-Za-z_][\w.-]*)>([\s\S]*?)<\/\1>/g;
const WRAP_OPEN = /<function_calls>/;
const WRAP_CLOSE = /<\/function_calls>/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let m = findTag(INVOKE, text, 0); m !== undefined; m = findTag(INVOKE, text, m.index + m[0].length)) {
    const bodyStart = m.index + m[0].length;
    const close = findTag(INVOKE_END, text, bodyStart);
    const next = findTag(INVOKE, text, bodyStart);
    const closed = close !== undefined && (next === undefined || close.index < next.index);
    if (context.partial && !closed) {
      pending = widen(text, { start: m.index, end: bodyStart }, WRAP_OPEN, WRAP_CLOSE).start;
      break;
    }
    const bodyEnd = closed ? close.index : (next?.index ?? text.length);
    const span = widen(text, { start: m.index, end: closed ? close.index + close[0].length : bodyEnd }, WRAP_OPEN, WRAP_CLOSE);
    const body = text.slice(bodyStart, bodyEnd);
    const name = TOOL_NAME.exec(body)?.[1]?.trim();
    if (name === undefined || name === '') {
      found.problems.push({ ...span, message: '<invoke> without a <tool_name> (expected <invoke><tool_name>NAME</tool_name><parameters>…</parameters></invoke>)' });
      continue;
    }
    const args: Record<string, unknown> = {};
    const params = PARAMETERS.exec(body)?.[1] ?? '';
    CHILD.lastIndex = 0;
    for (let c = CHILD.exec(params); c !== null; c = CHILD.exec(params)) {
      Object.defineProperty(args, c[1]!, { value: context.value(name, c[1]!, tagValue(c[2]!)), enumerable: true, writable: true, configurable: true });
    }
    found.calls.push({ ...span, name, arguments: args });
  }
  return { calls: found.calls, problems: found.problems, ...(pending !== undefined ? { pending } : {}) };
}

export const anthropicLegacy: ToolCallFormat = {
  name: 'anthropic-legacy',
  models: 'Claude 2.1-era prompted tool use (<invoke><tool_name>)',
  detect: (text) => text.indexOf('<invoke>'),
  parse,
};
