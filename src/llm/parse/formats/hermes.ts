import { type FormatContext, formatResult, type FormatResult, foundCall, newFound, type ToolCallFormat } from '../format.js';
import { echoesTemplate } from '../not-a-call.js';
import { scanJson, type JsonScan } from '../scan-json.js';
import { searchText, Seeker } from './special-tokens.js';

// Hermes 2/3, Qwen2.5, Qwen3, xLAM and most fine-tunes of them: JSON inside <tool_call> tags,
// several per message, text around them.
//
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
//
// The content is searched loosely (a name alone is a call without arguments; a list holds several).
// A block with content but no call is a problem, unless it is the template's own instruction
// (`{"name": <function-name>, "arguments": <args-json-object>}`) echoed back. Models trained on it
// also wrap calls in <function_call>, <tools>, <tool>, <response>, <json> or <xml> (read as
// llama.cpp reads them, see OPEN).
// Source: NousResearch/Hermes-3-Llama-3.1-8B and Qwen/Qwen2.5-7B-Instruct `tokenizer_config.json`
// chat templates; vLLM `hermes_tool_parser.py`.

/**
 * The tags a call is wrapped in. <tool_call> is the template's; the others are what models trained
 * on it write instead, as llama.cpp's Hermes 2 Pro parser reads them. <tool_call> and
 * <function_call> hold calls as the template writes them (a name alone is a call); the others only
 * count around a JSON value, and only for a call with a name and arguments: `<json>{"name":
 * "Alice"}</json>` is data, and text in such a tag that holds no call is no problem.
 */
const OPEN = /<(tool_call|function_call|tools?|response|json|JSON|xml)>/g;
/** The template's own tags: what they hold is meant as calls. */
const CALL_TAGS = new Set(['tool_call', 'function_call']);
const JSON_START = /^\s*[{[\uff5b]/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const st: JsonScan = { text, out: found, tools: context.tools, partial: false, pending: undefined };
  let pending: number | undefined;
  const opens = new Seeker(text, OPEN);
  const byTag = new Map<string, { opens: Seeker; closes: Seeker }>();
  for (let open = opens.find(0); open !== undefined; ) {
    const tag = open.match![1]!;
    const at = open.at;
    const contentStart = open.end;
    const ownTag = CALL_TAGS.has(tag);
    if (!ownTag && !JSON_START.test(text.slice(contentStart, contentStart + 64))) {
      open = opens.find(contentStart);
      continue;
    }
    let seekers = byTag.get(tag);
    if (seekers === undefined) {
      seekers = { opens: new Seeker(text, `<${tag}>`), closes: new Seeker(text, `</${tag}>`) };
      byTag.set(tag, seekers);
    }
    const next = seekers.opens.find(contentStart);
    const closeAt = seekers.closes.find(contentStart, next?.at);
    const closed = closeAt !== undefined;
    if (context.partial && !closed) {
      pending = at;
      break;
    }
    const contentEnd = closeAt?.at ?? next?.at ?? text.length;
    const end = closeAt?.end ?? contentEnd;
    const before = found.calls.length + found.problems.length;
    const problemsBefore = found.problems.length;
    scanJson(st, contentStart, contentEnd, ownTag);
    // A tag of another's: calls only, no complaints about what is not one.
    if (!ownTag) found.problems.length = problemsBefore;
    // Everything found inside belongs to the whole block (the tags go with the call).
    for (let i = before; i < found.calls.length; i++) {
      const call = found.calls[i]!;
      found.calls[i] = foundCall({ start: at, end }, call.name, call.arguments, call.id);
    }
    for (let i = before; i < found.problems.length; i++) found.problems[i] = { ...found.problems[i]!, start: at, end };
    const content = text.slice(contentStart, contentEnd).trim();
    if (ownTag && found.calls.length + found.problems.length === before && content !== '' && !echoesTemplate(content)) {
      found.problems.push({ start: at, end, message: closed ? `no JSON call inside <${tag}>…</${tag}>` : `unterminated <${tag}> tag without a JSON call` });
    }
    open = opens.find(end);
  }
  return formatResult(found.calls, found.problems, pending);
}

export const hermes: ToolCallFormat = {
  name: 'hermes',
  models: 'Hermes 2/3, Qwen2.5, Qwen3, xLAM (<tool_call>{…}</tool_call>)',
  markers: '<',
  detect: (text) => searchText(text, OPEN),
  parse,
};
