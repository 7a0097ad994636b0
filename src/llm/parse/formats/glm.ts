import type { FormatContext, FormatResult, ToolCallFormat } from '../format.js';
import { newFound } from '../json-calls.js';
import { findTag, tagValue } from './xml-tags.js';

// GLM-4.5, 4.6, 4.7 (Zhipu): the name right after <tool_call>, then key/value tag pairs.
//
//   <tool_call>get_weather
//   <arg_key>city</arg_key>
//   <arg_value>Beijing</arg_value>
//   </tool_call>
//
// (4.7 drops the newlines.) The template writes non-string values as JSON; with the tools known
// they are typed by the parameter's schema. A <tool_call> whose content starts with JSON or a tag
// belongs to Hermes or Qwen3-Coder and is left to them.
// Source: zai-org/GLM-4.5 `chat_template.jinja`; vLLM `glm4_moe_tool_parser.py`.

const OPEN = /<tool_call>/g;
const CLOSE = /<\/tool_call>/g;
const KEY = /<arg_key>([\s\S]*?)<\/arg_key>/g;
const VALUE = /^\s*<arg_value>([\s\S]*?)<\/arg_value>/;
const NAME = /^\s*([A-Za-z_][\w.-]*)\s*(?=<arg_key>|$)/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let m = findTag(OPEN, text, 0); m !== undefined; m = findTag(OPEN, text, m.index + m[0].length)) {
    const bodyStart = m.index + m[0].length;
    const close = findTag(CLOSE, text, bodyStart);
    const next = findTag(OPEN, text, bodyStart);
    const closed = close !== undefined && (next === undefined || close.index < next.index);
    const bodyEnd = closed ? close.index : (next?.index ?? text.length);
    const body = text.slice(bodyStart, bodyEnd);
    const name = NAME.exec(body)?.[1];
    if (name === undefined) {
      // Not GLM's (JSON, a tag, prose): unless it is still arriving.
      if (context.partial && !closed && /^\s*[A-Za-z_][\w.-]*\s*$/.test(body)) {
        pending = m.index;
        break;
      }
      continue;
    }
    if (context.partial && !closed) {
      pending = m.index;
      break;
    }
    const span = { start: m.index, end: closed ? close.index + close[0].length : bodyEnd };
    const args: Record<string, unknown> = {};
    let broken: string | undefined;
    for (let k = findTag(KEY, text, bodyStart, bodyEnd); k !== undefined; k = findTag(KEY, text, KEY.lastIndex, bodyEnd)) {
      const key = k[1]!.trim();
      const value = VALUE.exec(text.slice(KEY.lastIndex, bodyEnd));
      if (value === null) {
        broken = `<arg_key>${key}</arg_key> has no <arg_value>…</arg_value> after it`;
        break;
      }
      Object.defineProperty(args, key, { value: context.value(name, key, tagValue(value[1]!)), enumerable: true, writable: true, configurable: true });
      KEY.lastIndex += value[0].length;
    }
    if (broken !== undefined) found.problems.push({ ...span, name, code: 'INVALID_ARGUMENTS', message: `GLM call to '${name}': ${broken}` });
    else found.calls.push({ ...span, name, arguments: args });
  }
  return { calls: found.calls, problems: found.problems, ...(pending !== undefined ? { pending } : {}) };
}

export const glm: ToolCallFormat = {
  name: 'glm',
  models: 'GLM-4.5, 4.6, 4.7 (Zhipu)',
  detect: (text) => text.indexOf('<tool_call>'),
  parse,
};
