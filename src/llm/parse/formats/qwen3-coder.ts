import type { FormatContext, FormatResult, ToolCallFormat } from '../format.js';
import { newFound } from '../json-calls.js';
import { findTag, tagValue, widen } from './xml-tags.js';

// Qwen3-Coder (and Qwen3.5 / Qwen3-Next in coder mode): XML with the names inside the tags.
//
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   <parameter=days>
//   3
//   </parameter>
//   </function>
//   </tool_call>
//
// Values are text; with the tools known they are typed by the parameter's schema (`3` → 3).
// A missing </parameter> ends at the next tag, a missing <tool_call> wrapper is tolerated, as
// vLLM's parser does. `<function=NAME>` followed by JSON is Functionary v3.1, read by its own format.
// Source: Qwen/Qwen3-Coder-30B-A3B-Instruct `chat_template.jinja`; vLLM `qwen3coder_tool_parser.py`.

const FUNCTION = /<function=([^>\n]*)>/g;
const FUNCTION_END = /<\/function>/g;
const PARAMETER = /<parameter=([^>\n]*)>/g;
const PARAMETER_END = /<\/parameter>/g;
const WRAP_OPEN = /<tool_call>/;
const WRAP_CLOSE = /<\/tool_call>/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let m = findTag(FUNCTION, text, 0); m !== undefined; m = findTag(FUNCTION, text, m.index + 1)) {
    const bodyStart = m.index + m[0].length;
    if (/^\s*[{[]/.test(text.slice(bodyStart, bodyStart + 64))) continue; // Functionary v3.1's JSON body.
    const name = m[1]!.trim();
    const close = findTag(FUNCTION_END, text, bodyStart);
    const next = findTag(FUNCTION, text, bodyStart);
    const closed = close !== undefined && (next === undefined || close.index < next.index);
    if (context.partial && !closed) {
      pending = widen(text, { start: m.index, end: bodyStart }, WRAP_OPEN, WRAP_CLOSE).start;
      break;
    }
    const bodyEnd = closed ? close.index : (next?.index ?? text.length);
    const span = widen(text, { start: m.index, end: closed ? close.index + close[0].length : bodyEnd }, WRAP_OPEN, WRAP_CLOSE);
    if (name === '') {
      found.problems.push({ ...span, message: 'Qwen3-Coder <function=…> without a function name' });
      continue;
    }
    const args: Record<string, unknown> = {};
    let count = 0;
    for (let p = findTag(PARAMETER, text, bodyStart, bodyEnd); p !== undefined; ) {
      const valueStart = p.index + p[0].length;
      const nextParam = findTag(PARAMETER, text, valueStart, bodyEnd);
      const end = findTag(PARAMETER_END, text, valueStart, nextParam?.index ?? bodyEnd);
      const valueEnd = end?.index ?? nextParam?.index ?? bodyEnd;
      const key = p[1]!.trim();
      Object.defineProperty(args, key, { value: context.value(name, key, tagValue(text.slice(valueStart, valueEnd))), enumerable: true, writable: true, configurable: true });
      count++;
      p = nextParam;
    }
    const outside = text.slice(bodyStart, bodyEnd).replace(/<parameter=[\s\S]*/, '').trim();
    if (count === 0 && outside !== '') {
      found.problems.push({ ...span, name, code: 'INVALID_ARGUMENTS', message: `Qwen3-Coder call to '${name}': no <parameter=…> tags inside <function=${name}>` });
      continue;
    }
    found.calls.push({ ...span, name, arguments: args });
  }
  return { calls: found.calls, problems: found.problems, ...(pending !== undefined ? { pending } : {}) };
}

export const qwen3Coder: ToolCallFormat = {
  name: 'qwen3-coder',
  models: 'Qwen3-Coder, Qwen3.5 (XML parameters)',
  detect: (text) => text.indexOf('<function='),
  parse,
};
