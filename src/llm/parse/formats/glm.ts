import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { Seeker } from './special-tokens.js';
import { tagValue } from './xml-tags.js';
import { defineOwn } from '../../../common/define-own.js';

// GLM-4.5, 4.6, 4.7 (Zhipu): the name right after <tool_call>, then key/value tag pairs.
//
//   <tool_call>get_weather
//   <arg_key>city</arg_key>
//   <arg_value>Beijing</arg_value>
//   </tool_call>
//
// (4.7 drops the newlines; 4.6 is seen writing them out as `\n`.) The template writes non-string
// values as JSON; with the tools known they are typed by the parameter's schema. A call must end
// with its </tool_call>: one cut off is a problem, not a call. A <tool_call> whose content starts
// with JSON or a tag belongs to Hermes or Qwen3-Coder and is left to them.
// Source: zai-org/GLM-4.5 `chat_template.jinja`; vLLM `glm4_moe_tool_parser.py`.

const KEY = /<arg_key>([\s\S]*?)<\/arg_key>/g;
/** Between the tags: spaces, or a newline written out as `\n` (GLM-4.6 does, after the name and between tags). */
const VALUE = /^(?:\s|\\n)*<arg_value>([\s\S]*?)<\/arg_value>/;
const NAME = /^\s*([A-Za-z_][\w.-]*)(?:\s|\\n)*(?=<arg_key>|$)/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  const opens = new Seeker(text, '<tool_call>');
  const closes = new Seeker(text, '</tool_call>');
  for (let m = opens.find(0); m !== undefined; m = opens.find(m.end)) {
    const bodyStart = m.end;
    const next = opens.find(bodyStart);
    const close = closes.find(bodyStart, next?.at);
    const closed = close !== undefined;
    const bodyEnd = close?.at ?? next?.at ?? text.length;
    const body = text.slice(bodyStart, bodyEnd);
    const name = NAME.exec(body)?.[1];
    if (name === undefined) {
      // Not GLM's (JSON, a tag, prose): unless it is still arriving.
      if (context.partial && !closed && /^\s*[A-Za-z_][\w.-]*\s*$/.test(body)) {
        pending = m.at;
        break;
      }
      continue;
    }
    if (context.partial && !closed) {
      pending = m.at;
      break;
    }
    const span = { start: m.at, end: close?.end ?? bodyEnd };
    if (!closed) {
      // Cut off before its </tool_call>: no call (vLLM and SGLang leave such a text as content), but a problem saying so.
      found.problems.push({ start: span.start, end: span.end, name, message: `GLM call to '${name}' has no </tool_call>: the text ends (or the next call starts) before it` });
      continue;
    }
    const args: Record<string, unknown> = {};
    let broken: string | undefined;
    KEY.lastIndex = bodyStart;
    for (let k = KEY.exec(text); k !== null && k.index < bodyEnd; k = KEY.exec(text)) {
      const key = k[1]!.trim();
      const value = VALUE.exec(text.slice(KEY.lastIndex, bodyEnd));
      if (value === null) {
        broken = `<arg_key>${key}</arg_key> has no <arg_value>…</arg_value> after it`;
        break;
      }
      defineOwn(args, key, context.value(name, key, tagValue(value[1]!)));
      KEY.lastIndex += value[0].length;
    }
    if (broken !== undefined) found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `GLM call to '${name}': ${broken}` });
    else found.calls.push({ start: span.start, end: span.end, name, arguments: args });
  }
  return formatResult(found.calls, found.problems, pending);
}

export const glm: ToolCallFormat = {
  name: 'glm',
  models: 'GLM-4.5, 4.6, 4.7 (Zhipu)',
  markers: '<',
  detect: (text) => text.indexOf('<tool_call>'),
  parse,
};
