import { type FormatContext, formatResult, type FormatResult, newFound, type Span, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';
import { blockSpans, firstFound, resumable, Seeker } from './special-tokens.js';

// Kimi-K2 (Moonshot). Calls sit in a section, each with an id that carries the name:
//
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>
//
// The id (`functions.get_weather:0`) is kept as the call's id, as Kimi's template expects it back;
// the name is the part between the namespace and the index. An id without its `:INDEX`
// (`functions.get_weather.0`) is no call, as vLLM and SGLang read it, but a problem naming it.
// Source: moonshotai/Kimi-K2-Instruct `chat_template.jinja`; vLLM `kimi_k2_tool_parser.py`.

const SECTION_BEGIN = '<|tool_calls_section_begin|>';
const SECTION_END = '<|tool_calls_section_end|>';
const CALL_BEGIN = '<|tool_call_begin|>';
const ARGS_BEGIN = '<|tool_call_argument_begin|>';
const CALL_END = '<|tool_call_end|>';
/** `functions.NAME:INDEX` (the namespace may be left out, or be another one); the name is the last dotted part. */
const ID = /^(?:[^:\s]*\.)?([^.:\s]+):\d+$/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  const begins = new Seeker(text, CALL_BEGIN);
  const stops = [new Seeker(text, CALL_END), begins, new Seeker(text, SECTION_END)];
  const argsBegins = new Seeker(text, ARGS_BEGIN);
  for (let b = begins.find(0); b !== undefined; b = begins.find(b.end)) {
    const at = b.at;
    const stop = firstFound(stops, b.end);
    const ended = stop !== undefined && text.startsWith(CALL_END, stop.at);
    if (context.partial && !ended) {
      pending = at;
      break;
    }
    const limit = stop?.at ?? text.length;
    const span: Span = { start: at, end: ended ? stop.end : limit };
    const args = argsBegins.find(b.end, limit);
    const id = text.slice(b.end, args?.at ?? limit).trim();
    const written = ID.exec(id);
    if (written === null) {
      // `functions.get_weather.0`: no call (as vLLM and SGLang read it), but never silent about it.
      const guess = /^(?:functions\.)?([A-Za-z_][\w-]*)/.exec(id)?.[1];
      const message = id === '' ? 'Kimi-K2 tool call without a function id (expected functions.NAME:INDEX)' : `Kimi-K2 tool call id '${id}' has no ':INDEX' after the name (expected functions.NAME:INDEX)`;
      found.problems.push(guess === undefined ? { start: span.start, end: span.end, message } : { start: span.start, end: span.end, message, name: guess });
      continue;
    }
    const name = written[1]!;
    if (args === undefined) {
      found.problems.push({ start: span.start, end: span.end, message: `Kimi-K2 call to '${name}': no <|tool_call_argument_begin|> before the call ends`, name, id, code: 'INVALID_ARGUMENTS' });
      continue;
    }
    const value = readJsonValue(text, args.end, false, limit);
    if (value.ok === true) found.calls.push({ start: span.start, end: span.end, name, id, arguments: asArguments(value.value) });
    else found.problems.push({ start: span.start, end: span.end, message: `Kimi-K2 call to '${name}': the arguments are not valid JSON: ${value.ok === false ? value.error : 'unterminated'}`, name, id, code: 'INVALID_ARGUMENTS' });
  }
  const claims = blockSpans(text, SECTION_BEGIN, SECTION_END, context.inside === true);
  return formatResult(found.calls, found.problems, pending, context.partial ? resumable(claims, found) : claims);
}

export const kimiK2: ToolCallFormat = {
  name: 'kimi-k2',
  models: 'Kimi-K2 (Moonshot)',
  markers: '<',
  // The section's opening token too: a stream must not settle past it before the first call comes.
  detect: (text) => {
    const call = text.indexOf(CALL_BEGIN);
    return call >= 0 ? call : text.indexOf(SECTION_BEGIN);
  },
  parse,
};
