import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';
import { searchText, Seeker } from './special-tokens.js';
import { tagMayFollow, waitsForClose, widen, wrapper } from './xml-tags.js';

// Functionary v3.1 (MeetKai, on Llama 3.1), also the custom-tool format of Meta's Llama 3.1 prompt
// guide: the name in the tag, JSON arguments inside it.
//
//   <function=get_weather>{"location": "San Francisco, CA"}</function>
//   <function name="get_weather">{"location": "San Francisco, CA"}</function>   (Hermes 2 Pro models)
// A <tool_call> right around the call (Hermes 2 Pro models write one) goes with it.
//
// Source: meetkai/functionary-small-v3.1 `tokenizer_config.json` chat template; Meta, "Llama 3.1
// model card and prompt formats" (user-defined custom tool calling); llama.cpp
// `common/chat.cpp` (COMMON_CHAT_FORMAT_FUNCTIONARY_V3_1_LLAMA_3_1).

/** `<function=NAME>`, or `<function name="NAME">` (what Hermes 2 Pro models write too, as llama.cpp reads them). */
const FUNCTION = /<function(?:=([^>\n]*)|\s+name\s*=\s*"([^"\n]*)")>/g;
const CLOSE = /^\s*<\/function>/;
const FUNCTION_AT = new RegExp(FUNCTION.source);
const WRAP = wrapper('<tool_call>', '</tool_call>');

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  const functions = new Seeker(text, FUNCTION);
  for (let m = functions.find(0); m !== undefined; m = functions.find(m.end)) {
    const bodyStart = m.end;
    const body = text.slice(bodyStart, bodyStart + 64);
    // `<function=NAME>` then tags, or nothing, is Qwen3-Coder's; JSON (or the end of a stream) is this format's.
    if (!/^\s*[{[]/.test(body) && !(context.partial && body.trim() === '')) continue;
    const name = (m.match![1] ?? m.match![2] ?? '').trim();
    // A call's text ends where the next one starts: an unclosed body never makes the search run to the end again.
    const value = readJsonValue(text, bodyStart, context.partial, functions.find(bodyStart)?.at ?? text.length);
    if (value.ok === 'open' || (context.partial && value.ok === false && body.trim() === '')) {
      pending = widen(text, { start: m.at, end: bodyStart }, WRAP).start;
      break;
    }
    const close = CLOSE.exec(text.slice(value.end, value.end + 32));
    const own = { start: m.at, end: value.end + (close?.[0].length ?? 0) };
    // A <tool_call> right around it (Hermes 2 Pro models write so) goes with the call.
    const span = widen(text, own, WRAP);
    // Its </function>, or the wrapper's </tool_call>, may still be on the way: read again once it has come.
    if (context.partial && (close === null ? tagMayFollow(text, value.end) : span.start < own.start && waitsForClose(text, own, WRAP))) pending = Math.min(pending ?? span.start, span.start);
    if (name === '') found.problems.push({ start: span.start, end: span.end, message: 'Functionary <function=…> without a function name' });
    else if (value.ok) found.calls.push({ start: span.start, end: span.end, name, arguments: asArguments(value.value) });
    else found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `Functionary call to '${name}': the arguments are not valid JSON: ${value.error}` });
  }
  return formatResult(found.calls, found.problems, pending);
}

export const functionaryV31: ToolCallFormat = {
  name: 'functionary-v3.1',
  models: 'Functionary v3.1, Llama 3.1 custom tools (<function=NAME>{…}</function>)',
  markers: '<',
  detect: (text) => {
    const at = text.indexOf('<function');
    return at < 0 ? -1 : searchText(text, FUNCTION_AT);
  },
  parse,
};
