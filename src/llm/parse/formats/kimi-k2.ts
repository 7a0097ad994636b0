import type { FormatContext, FormatResult, Span, ToolCallFormat } from '../format.js';
import { asArguments, newFound, readJsonValue } from '../json-calls.js';
import { blockSpans, nextOf } from './special-tokens.js';

// Kimi-K2 (Moonshot). Calls sit in a section, each with an id that carries the name:
//
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>
//
// The id (`functions.get_weather:0`) is kept as the call's id, as Kimi's template expects it back;
// the name is the part between the namespace and the index.
// Source: moonshotai/Kimi-K2-Instruct `chat_template.jinja`; vLLM `kimi_k2_tool_parser.py`.

const SECTION_BEGIN = '<|tool_calls_section_begin|>';
const SECTION_END = '<|tool_calls_section_end|>';
const CALL_BEGIN = '<|tool_call_begin|>';
const ARGS_BEGIN = '<|tool_call_argument_begin|>';
const CALL_END = '<|tool_call_end|>';

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let at = text.indexOf(CALL_BEGIN); at >= 0; at = text.indexOf(CALL_BEGIN, at + 1)) {
    const stop = nextOf(text, [CALL_END, CALL_BEGIN, SECTION_END], at + CALL_BEGIN.length);
    if (context.partial && (stop === undefined || stop.token !== CALL_END)) {
      pending = at;
      break;
    }
    const limit = stop?.at ?? text.length;
    const end = stop?.token === CALL_END ? stop.at + CALL_END.length : limit;
    const span: Span = { start: at, end };
    const args = text.indexOf(ARGS_BEGIN, at);
    const idEnd = args >= 0 && args < limit ? args : limit;
    const id = text.slice(at + CALL_BEGIN.length, idEnd).trim();
    const name = id.split(':')[0]!.split('.').pop()!.trim();
    if (name === '') {
      found.problems.push({ ...span, message: 'Kimi-K2 tool call without a function id (expected functions.NAME:INDEX)' });
      continue;
    }
    if (idEnd === limit) {
      found.problems.push({ ...span, message: `Kimi-K2 call to '${name}': no <|tool_call_argument_begin|> before the call ends`, name, id, code: 'INVALID_ARGUMENTS' });
      continue;
    }
    const value = readJsonValue(text, args + ARGS_BEGIN.length, false, limit);
    if (value.ok === true) found.calls.push({ ...span, name, id, arguments: asArguments(value.value) });
    else found.problems.push({ ...span, message: `Kimi-K2 call to '${name}': the arguments are not valid JSON: ${value.ok === false ? value.error : 'unterminated'}`, name, id, code: 'INVALID_ARGUMENTS' });
  }
  const claims = blockSpans(text, SECTION_BEGIN, SECTION_END);
  return { calls: found.calls, problems: found.problems, claims, ...(pending !== undefined ? { pending } : {}) };
}

export const kimiK2: ToolCallFormat = {
  name: 'kimi-k2',
  models: 'Kimi-K2 (Moonshot)',
  detect: (text) => text.indexOf(CALL_BEGIN),
  parse,
};
