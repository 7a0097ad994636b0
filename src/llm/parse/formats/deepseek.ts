import { type Claim, type FormatContext, formatResult, type FormatResult, newFound, type Span, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';
import { resumable, searchText, Seeker } from './special-tokens.js';

// DeepSeek V3, R1 and V3.1. Calls sit between special tokens (full-width bars, `▁` for spaces):
//
//   V3 / R1:  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//             ```json
//             {"city": "Paris"}
//             ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   V3.1:     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//
// Which one it is shows after the separator: JSON right away (V3.1), or a name line and a fenced
// block (V3). Some detokenizers print the bars as ASCII `|`; both are read. R1 distills are seen
// opening a call with <｜tool▁calls｜> alone; that is read too.
// Source: deepseek-ai/DeepSeek-V3 and DeepSeek-V3.1 `tokenizer_config.json` chat templates;
// vLLM `deepseekv3_tool_parser.py`, `deepseekv31_tool_parser.py`.

const token = (word: string): RegExp => new RegExp(`<[\\uff5c|]${word.replace(/ /g, '\u2581')}[\\uff5c|]>`, 'g');
const CALLS_BEGIN = token('tool calls begin');
const R1_CALLS = new RegExp(token('tool calls').source);
/** A section opens where its calls begin, or at R1's <｜tool▁calls｜>. */
const SECTION_BEGIN = token('tool calls(?:\u2581begin)?');
const CALLS_END = token('tool calls end');
/** A call opens with <｜tool▁call▁begin｜>, or with <｜tool▁calls｜> where R1 models leave out the rest (as llama.cpp reads them). */
const CALL_BEGIN = token('tool call(?:s|\u2581begin)');
const CALL_END = token('tool call end');
const SEP = token('tool sep');

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const claims: Claim[] = [];
  const begins = new Seeker(text, CALL_BEGIN);
  const ends = new Seeker(text, CALL_END);
  const seps = new Seeker(text, SEP);
  const callsEnd = new Seeker(text, CALLS_END);
  let pending: number | undefined;
  for (let begin = begins.find(0); begin !== undefined; begin = begins.find(begin.end)) {
    const nextBegin = begins.find(begin.end);
    const close = ends.find(begin.end, nextBegin?.at);
    if (context.partial && close === undefined) {
      pending = begin.at;
      break;
    }
    const limit = close?.at ?? nextBegin?.at ?? callsEnd.find(begin.end)?.at ?? text.length;
    const span: Span = { start: begin.at, end: close?.end ?? limit };
    const sep = seps.find(begin.end, limit);
    if (sep === undefined) {
      found.problems.push({ start: span.start, end: span.end, message: 'DeepSeek tool call without <｜tool▁sep｜> between its type or name and its arguments' });
      continue;
    }
    const before = text.slice(begin.end, sep.at).trim();
    const after = text.slice(sep.end, limit);
    const v31 = /^\s*[{[]/.test(after);
    const name = v31 ? before : (/^\s*([^\n`]*)/.exec(after)?.[1] ?? '').trim();
    if (name === '') {
      found.problems.push({ start: span.start, end: span.end, message: 'DeepSeek tool call without a function name' });
      continue;
    }
    // V3: skip the name line and the opening fence; the JSON follows.
    const argsFrom = v31 ? sep.end : sep.end + after.indexOf(name) + name.length;
    const fenceOpen = /^\s*```[a-z]*\s*/i.exec(text.slice(argsFrom, limit));
    const value = readJsonValue(text, argsFrom + (fenceOpen?.[0].length ?? 0), false, limit);
    if (value.ok === true) found.calls.push({ start: span.start, end: span.end, name, arguments: asArguments(value.value) });
    else if (!v31 && text.slice(argsFrom, limit).replace(/```\w*/g, '').trim() === '') found.calls.push({ start: span.start, end: span.end, name, arguments: {} });
    else found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `DeepSeek call to '${name}': the arguments are not valid JSON: ${value.ok === false ? value.error : 'unterminated'}` });
  }
  const sections = new Seeker(text, SECTION_BEGIN);
  // Told the text starts inside a section (a stream read on from past its calls), the first one opens at 0.
  for (let open = context.inside === true ? { at: 0, end: 0 } : sections.find(0); open !== undefined; open = sections.find(open.end)) {
    const shut = callsEnd.find(open.end);
    claims.push(shut === undefined ? { start: open.at, end: text.length } : { start: open.at, end: shut.end, closed: true });
    if (shut === undefined) break;
  }
  return formatResult(found.calls, found.problems, pending, context.partial ? resumable(claims, found) : claims);
}

export const deepseek: ToolCallFormat = {
  name: 'deepseek',
  models: 'DeepSeek V3, R1, V3.1',
  markers: '\u2581',
  // `▁call▁begin` or `▁calls▁begin`: a stream must not settle past a section's opening token before its first call comes.
  detect: (text) => {
    const call = text.indexOf('\u2581call\u2581begin');
    if (call >= 0) return call;
    const section = text.indexOf('\u2581calls\u2581begin');
    return section >= 0 ? section : searchText(text, R1_CALLS);
  },
  parse,
};
