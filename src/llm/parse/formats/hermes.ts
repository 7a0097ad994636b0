import { type FormatContext, formatResult, type FormatResult, foundCall, newFound, type ToolCallFormat } from '../format.js';
import { echoesTemplate } from '../not-a-call.js';
import { scanJson, type JsonScan } from '../scan-json.js';
import { Seeker } from './special-tokens.js';

// Hermes 2/3, Qwen2.5, Qwen3, xLAM and most fine-tunes of them: JSON inside <tool_call> tags,
// several per message, text around them.
//
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
//
// The content is searched loosely (a name alone is a call without arguments; a list holds several).
// A block with content but no call is a problem, unless it is the template's own instruction
// (`{"name": <function-name>, "arguments": <args-json-object>}`) echoed back.
// Source: NousResearch/Hermes-3-Llama-3.1-8B and Qwen/Qwen2.5-7B-Instruct `tokenizer_config.json`
// chat templates; vLLM `hermes_tool_parser.py`.

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const st: JsonScan = { text, out: found, tools: context.tools, partial: false, pending: undefined };
  let pending: number | undefined;
  const opens = new Seeker(text, OPEN);
  const closes = new Seeker(text, CLOSE);
  for (let open = opens.find(0); open !== undefined; ) {
    const at = open.at;
    const contentStart = open.end;
    const next = opens.find(contentStart);
    const closeAt = closes.find(contentStart, next?.at);
    const closed = closeAt !== undefined;
    if (context.partial && !closed) {
      pending = at;
      break;
    }
    const close = closeAt?.at ?? -1;
    const contentEnd = closed ? close : (next?.at ?? text.length);
    const end = closed ? close + CLOSE.length : contentEnd;
    const before = found.calls.length + found.problems.length;
    scanJson(st, contentStart, contentEnd, true);
    // Everything found inside belongs to the whole block (the tags go with the call).
    for (let i = before; i < found.calls.length; i++) {
      const call = found.calls[i]!;
      found.calls[i] = foundCall({ start: at, end }, call.name, call.arguments, call.id);
    }
    for (let i = before; i < found.problems.length; i++) found.problems[i] = { ...found.problems[i]!, start: at, end };
    const content = text.slice(contentStart, contentEnd).trim();
    if (found.calls.length + found.problems.length === before && content !== '' && !echoesTemplate(content)) {
      found.problems.push({ start: at, end, message: closed ? 'no JSON call inside <tool_call>…</tool_call>' : 'unterminated <tool_call> tag without a JSON call' });
    }
    open = opens.find(end);
  }
  return formatResult(found.calls, found.problems, pending);
}

export const hermes: ToolCallFormat = {
  name: 'hermes',
  models: 'Hermes 2/3, Qwen2.5, Qwen3, xLAM (<tool_call>{…}</tool_call>)',
  markers: '<',
  detect: (text) => text.indexOf(OPEN),
  parse,
};
