import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { Seeker } from './special-tokens.js';
import { waitsForClose, widen, wrapper } from './xml-tags.js';
import { defineOwn } from '../../../common/define-own.js';

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
// Values are text, less the spaces and newlines around them (the template writes each on a line of
// its own; vLLM, SGLang and llama.cpp strip them too); with the tools known they are typed by the
// parameter's schema (`3` → 3).
// A missing </parameter> ends at the next tag, a missing <tool_call> wrapper is tolerated, as
// vLLM's parser does. `<function=NAME>` followed by JSON is Functionary v3.1, read by its own format.
// Source: Qwen/Qwen3-Coder-30B-A3B-Instruct `chat_template.jinja`; vLLM `qwen3coder_tool_parser.py`.

const FUNCTION = /<function=([^>\n]*)>/g;
const PARAMETER = /<parameter=([^>\n]*)>/g;
const WRAP = wrapper('<tool_call>', '</tool_call>');

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const functions = new Seeker(text, FUNCTION);
  const ends = new Seeker(text, '</function>');
  const parameters = new Seeker(text, PARAMETER);
  const parameterEnds = new Seeker(text, '</parameter>');
  let pending: number | undefined;
  for (let m = functions.find(0); m !== undefined; m = functions.find(m.end)) {
    const bodyStart = m.end;
    if (/^\s*[{[]/.test(text.slice(bodyStart, bodyStart + 64))) continue; // Functionary v3.1's JSON body.
    const name = m.match![1]!.trim();
    const next = functions.find(bodyStart);
    const close = ends.find(bodyStart, next?.at);
    if (context.partial && close === undefined) {
      pending = widen(text, { start: m.at, end: bodyStart }, WRAP).start;
      break;
    }
    const bodyEnd = close?.at ?? next?.at ?? text.length;
    const own = { start: m.at, end: close?.end ?? bodyEnd };
    const span = widen(text, own, WRAP);
    if (context.partial && waitsForClose(text, own, WRAP)) pending = Math.min(pending ?? span.start, span.start);
    if (name === '') {
      found.problems.push({ start: span.start, end: span.end, message: 'Qwen3-Coder <function=…> without a function name' });
      continue;
    }
    const args: Record<string, unknown> = {};
    let count = 0;
    for (let p = parameters.find(bodyStart, bodyEnd); p !== undefined; ) {
      const nextParam = parameters.find(p.end, bodyEnd);
      const end = parameterEnds.find(p.end, nextParam?.at ?? bodyEnd);
      const key = p.match![1]!.trim();
      defineOwn(args, key, context.value(name, key, text.slice(p.end, end?.at ?? nextParam?.at ?? bodyEnd).trim()));
      count++;
      p = nextParam;
    }
    if (count === 0 && text.slice(bodyStart, bodyEnd).trim() !== '') {
      found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `Qwen3-Coder call to '${name}': no <parameter=…> tags inside <function=${name}>` });
      continue;
    }
    found.calls.push({ start: span.start, end: span.end, name, arguments: args });
  }
  return formatResult(found.calls, found.problems, pending);
}

export const qwen3Coder: ToolCallFormat = {
  name: 'qwen3-coder',
  models: 'Qwen3-Coder, Qwen3.5 (XML parameters)',
  markers: '<',
  detect: (text) => text.indexOf('<function='),
  parse,
};
