import { type FormatContext, formatResult, type FormatResult, foundCall, newFound, type ToolCallFormat } from '../format.js';
import { addJsonCalls, asArguments, readJsonValue } from '../json-calls.js';

// Mistral. Every version starts its calls with the [TOOL_CALLS] token; what follows changed:
//
//   up to v7 (Mistral 7B v0.3, Nemo, Small 3.1):     [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]
//   v11+ (Small 3.2, Magistral, Devstral, Ministral): [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{}
//
// v11+ may put `[CALL_ID]id` between the name and [ARGS], and some outputs leave [ARGS] out
// (`[TOOL_CALLS]add{"a": 1}`); both are read.
// Source: mistralai/mistral-common tokenizer docs (`instruct/tokenizer` v3, v7, v11, v13);
// vLLM `mistral_tool_parser.py` and its tests.

const MARKER = '[TOOL_CALLS]';
const NAME = /^\s*([A-Za-z0-9_.-]+)/;
const CALL_ID = /^\s*\[CALL_ID\]\s*([A-Za-z0-9_-]+)/;
const ARGS = /^\s*\[ARGS\]/;
/** While streaming, what may still become `[CALL_ID]id[ARGS]{…}`: nothing yet, or a token half arrived. */
const TOKEN_ARRIVING = /^\s*(?:\[(?:C(?:A(?:L(?:L(?:_(?:I(?:D(?:\]\s*[A-Za-z0-9_-]*)?)?)?)?)?)?)?|A(?:R(?:G(?:S(?:\]\s*)?)?)?)?)?)?$/;

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  for (let at = text.indexOf(MARKER); at >= 0; ) {
    const next = text.indexOf(MARKER, at + MARKER.length);
    const limit = next < 0 ? text.length : next;
    let pos = at + MARKER.length;
    const rest = text.slice(pos, Math.min(limit, pos + 200));
    if (/^\s*[[{]/.test(rest)) {
      const value = readJsonValue(text, pos, context.partial, limit);
      if (value.ok === 'open') {
        pending = at;
        break;
      }
      const span = { start: at, end: value.end };
      if (value.ok) {
        if (addJsonCalls(value.value, true, span, context.tools, found) === 0) found.problems.push({ start: span.start, end: span.end, message: 'the JSON after [TOOL_CALLS] holds no call (expected [{"name": …, "arguments": {…}}])' });
      } else {
        found.problems.push({ start: span.start, end: span.end, message: `the JSON after [TOOL_CALLS] is not valid: ${value.error}` });
      }
      at = next;
      continue;
    }
    const name = NAME.exec(rest)?.[1];
    if (name === undefined) {
      if (context.partial && rest.trim() === '') {
        pending = at;
        break;
      }
      found.problems.push({ start: at, end: limit, message: 'nothing readable after [TOOL_CALLS] (expected a JSON list of calls, or NAME[ARGS]{…})' });
      at = next;
      continue;
    }
    pos += NAME.exec(rest)![0].length;
    const id = CALL_ID.exec(text.slice(pos, pos + 80));
    if (id !== null) pos += id[0].length;
    const args = ARGS.exec(text.slice(pos, pos + 16));
    if (args !== null) pos += args[0].length;
    const value = readJsonValue(text, pos, context.partial, limit);
    if (value.ok === 'open' || (context.partial && value.ok === false && limit === text.length && TOKEN_ARRIVING.test(text.slice(pos)))) {
      pending = at;
      break;
    }
    const span = { start: at, end: value.end };
    const callId = id?.[1];
    if (value.ok) found.calls.push(foundCall(span, name, asArguments(value.value), callId));
    else found.problems.push({ start: span.start, end: span.end, name, ...(callId !== undefined ? { id: callId } : {}), code: 'INVALID_ARGUMENTS', message: `Mistral call to '${name}': expected JSON arguments after [ARGS]: ${value.error}` });
    at = next;
  }
  return formatResult(found.calls, found.problems, pending);
}

export const mistral: ToolCallFormat = {
  name: 'mistral',
  models: 'Mistral, Mixtral, Nemo, Small, Magistral, Devstral, Ministral',
  markers: '[',
  detect: (text) => text.indexOf(MARKER),
  parse,
};
