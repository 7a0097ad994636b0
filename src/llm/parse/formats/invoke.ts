import { parseLenientJson } from '../lenient-json.js';
import type { FormatContext, FormatResult, ToolCallFormat } from '../format.js';
import { newFound } from '../json-calls.js';
import { findTag, tagValue, widen } from './xml-tags.js';

// `<invoke name="…">` with `<parameter name="…">` children: MiniMax-M2, Claude-style prompts, and
// DeepSeek V3.2's DSML, which spells the same tags with a `｜DSML｜` prefix.
//
//   <minimax:tool_call>                         <function_calls>
//   <invoke name="get_weather">                 <invoke name="get_weather">
//   <parameter name="city">Paris</parameter>    <parameter name="city">Paris</parameter>
//   </invoke>                                   </invoke>
//   </minimax:tool_call>                        </function_calls>
//
//   <｜DSML｜function_calls><｜DSML｜invoke name="get_weather"><｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>…
//
// Tags may carry a namespace prefix (`ns:invoke`). Values are text, typed by the parameter's
// schema when the tools are known; DSML's `string="false"` marks a JSON value.
// Source: MiniMaxAI/MiniMax-M2 `chat_template.jinja`; deepseek-ai/DeepSeek-V3.2 `encoding_dsv32.py`;
// vLLM `minimax_m2_tool_parser.py`, `deepseekv32_tool_parser.py`.

const PREFIX = '((?:[A-Za-z][\\w-]*:)|\\uff5cDSML\\uff5c)?';
const INVOKE = new RegExp(`<${PREFIX}invoke\\s+name\\s*=\\s*(?:"([^"]*)"|'([^']*)')\\s*>`, 'g');
const WRAP_OPEN = new RegExp(`<${PREFIX}(?:tool_call|function_calls)>`);
const WRAP_CLOSE = new RegExp(`</${PREFIX}(?:tool_call|function_calls)>`);
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let m = findTag(INVOKE, text, 0); m !== undefined; m = findTag(INVOKE, text, m.index + m[0].length)) {
    const prefix = escape(m[1] ?? '');
    const name = (m[2] ?? m[3] ?? '').trim();
    const bodyStart = m.index + m[0].length;
    const close = findTag(new RegExp(`</${prefix}invoke>`, 'g'), text, bodyStart);
    const next = findTag(INVOKE, text, bodyStart);
    const closed = close !== undefined && (next === undefined || close.index < next.index);
    if (context.partial && !closed) {
      pending = widen(text, { start: m.index, end: bodyStart }, WRAP_OPEN, WRAP_CLOSE).start;
      break;
    }
    const bodyEnd = closed ? close.index : (next?.index ?? text.length);
    const span = widen(text, { start: m.index, end: closed ? close.index + close[0].length : bodyEnd }, WRAP_OPEN, WRAP_CLOSE);
    if (name === '') {
      found.problems.push({ ...span, message: '<invoke> with an empty name' });
      continue;
    }
    const param = new RegExp(`<${prefix}parameter\\s+name\\s*=\\s*(?:"([^"]*)"|'([^']*)')([^>]*)>`, 'g');
    const paramEnd = new RegExp(`</${prefix}parameter>`, 'g');
    const args: Record<string, unknown> = {};
    for (let p = findTag(param, text, bodyStart, bodyEnd); p !== undefined; ) {
      const valueStart = p.index + p[0].length;
      const nextParam = findTag(param, text, valueStart, bodyEnd);
      const end = findTag(paramEnd, text, valueStart, nextParam?.index ?? bodyEnd);
      const key = (p[1] ?? p[2] ?? '').trim();
      const raw = tagValue(text.slice(valueStart, end?.index ?? nextParam?.index ?? bodyEnd));
      Object.defineProperty(args, key, { value: typed(name, key, raw, p[3] ?? '', context), enumerable: true, writable: true, configurable: true });
      p = nextParam;
    }
    found.calls.push({ ...span, name, arguments: args });
  }
  return { calls: found.calls, problems: found.problems, ...(pending !== undefined ? { pending } : {}) };
}

/** DSML says per parameter whether it is a string; otherwise the schema decides. */
function typed(tool: string, key: string, raw: string, attributes: string, context: FormatContext): unknown {
  const flag = /string\s*=\s*"(true|false)"/.exec(attributes)?.[1];
  if (flag === 'true') return raw;
  if (flag === 'false') {
    const json = parseLenientJson(raw);
    return json.ok ? json.value : raw;
  }
  return context.value(tool, key, raw);
}

export const invoke: ToolCallFormat = {
  name: 'invoke',
  models: 'MiniMax-M2, Claude-style <invoke name>, DeepSeek V3.2 (DSML)',
  detect: (text) => {
    const hits = [text.indexOf('<invoke'), text.indexOf(':invoke'), text.indexOf('\uff5cinvoke')].filter((i) => i >= 0);
    return hits.length === 0 ? -1 : Math.min(...hits);
  },
  parse,
};
