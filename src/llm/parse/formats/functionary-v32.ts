import { type Claim, type FormatContext, formatResult, type FormatResult, newFound, type Span, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';

// Functionary v3.2 (MeetKai): every part of the answer names its recipient after `>>>`; `all`
// is the user, anything else a function whose JSON arguments follow on the next line.
//
//   >>>all
//   Let me check the weather.>>>get_weather
//   {"location": "Hanoi"}>>>get_time
//   {"timezone": "Asia/Ho_Chi_Minh"}
//
// The generation prompt ends with `>>>`, so the first recipient may come without it
// (`get_weather\n{…}`): that is read only when the name is an offered tool or a `>>>` follows;
// `all\n` at the start is read as the user's recipient line. The recipient lines are layout, left
// out of the content. The `python` recipient takes code as it is, not JSON: `{ code }`.
// Source: meetkai/functionary-medium-v3.2 `tokenizer_config.json` chat template; llama.cpp
// `common/chat.cpp` (COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2).

const MARK = '>>>';
const FIRST = /^(\s*)([A-Za-z_][\w.-]*)\n(?=\s*[{[])/;
/** The first recipient without `>>>`: the user (`all`), or the Python tool, whose code comes as it is. */
const FIRST_OTHER = /^(\s*)(all|python)\n/;
/** The recipient whose body is code, not JSON arguments: it is called with `{ code }`. */
const PYTHON = 'python';
const RECIPIENT = /^([A-Za-z_][\w.-]*)[ \t]*\n/;

/** The first character after spaces could start a recipient's name: asked before FIRST, on every text without `>>>`. */
function startsWithName(text: string): boolean {
  let i = 0;
  while (i < text.length && i < 160 && text.charCodeAt(i) <= 32) i++;
  const c = text.charCodeAt(i) | 0x20;
  return (c >= 0x61 && c <= 0x7a) || text.charCodeAt(i) === 0x5f;
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const claims: Claim[] = [];
  let pending: number | undefined;
  const starts: { at: number; nameAt: number }[] = [];
  const first = context.atMessageStart ? (FIRST.exec(text) ?? FIRST_OTHER.exec(text)) : null;
  // A first recipient without `>>>` counts when it is an offered tool, the user, or when a `>>>` follows.
  if (first !== null && (context.tools?.has(first[2]!) || first[2] === 'all' || text.includes(MARK))) starts.push({ at: first[1]!.length, nameAt: first[1]!.length });
  for (let at = text.indexOf(MARK); at >= 0; at = text.indexOf(MARK, at + MARK.length)) starts.push({ at, nameAt: at + MARK.length });
  for (let i = 0; i < starts.length; i++) {
    const { at, nameAt } = starts[i]!;
    const limit = starts[i + 1]?.at ?? text.length;
    const recipient = RECIPIENT.exec(text.slice(nameAt, Math.min(limit, nameAt + 200)));
    if (recipient === null) {
      if (context.partial && limit === text.length && /^[\w.-]*$/.test(text.slice(nameAt))) pending = Math.min(pending ?? at, at);
      else if (!/^\s*$/.test(text.slice(nameAt, limit)) && /^[A-Za-z_][\w.-]*\s*$/.test(text.slice(nameAt, limit))) {
        found.problems.push({ start: at, end: limit, name: text.slice(nameAt, limit).trim(), code: 'INVALID_ARGUMENTS', message: `Functionary call to '${text.slice(nameAt, limit).trim()}': no arguments after the recipient line` });
      }
      continue;
    }
    const name = recipient[1]!;
    const bodyAt = nameAt + recipient[0].length;
    if (name === 'all') {
      // The recipient line is layout: the text after it is the content.
      claims.push({ start: at, end: bodyAt, closed: true, hide: true });
      continue;
    }
    if (name === PYTHON && !/^\s*[{[]/.test(text.slice(bodyAt, limit))) {
      // Code, as it is, to the next recipient or the end (while streaming, it may still grow).
      if (context.partial && limit === text.length) {
        pending = Math.min(pending ?? at, at);
        break;
      }
      const code = text.slice(bodyAt, limit).replace(/\s+$/, '');
      found.calls.push({ start: at, end: limit, name, arguments: { code } });
      continue;
    }
    const value = readJsonValue(text, bodyAt, context.partial, limit);
    if (value.ok === 'open' || (context.partial && value.ok === false && limit === text.length && text.slice(bodyAt).trim() === '')) {
      pending = Math.min(pending ?? at, at);
      break;
    }
    const span = { start: at, end: value.end };
    // `>>>x\n42` is a Python prompt in prose, unless x is an offered tool.
    if (!value.ok && !/^\s*[{[]/.test(text.slice(bodyAt, limit)) && !context.tools?.has(name)) continue;
    if (value.ok) found.calls.push({ start: span.start, end: span.end, name, arguments: asArguments(value.value) });
    else found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `Functionary call to '${name}': the arguments are not valid JSON: ${value.error}` });
  }
  return formatResult(found.calls, found.problems, pending, claims);
}

export const functionaryV32: ToolCallFormat = {
  name: 'functionary-v3.2',
  models: 'Functionary v3.2 (>>>NAME\\n{…})',
  detect: (text) => {
    // One-character search first: a whole marker searched in a CJK text costs far more.
    const mark = text.indexOf('>') < 0 ? -1 : text.indexOf(MARK);
    if (mark >= 0) return mark;
    if (!startsWithName(text)) return -1;
    const start = text.slice(0, 160);
    return FIRST.test(start) || FIRST_OTHER.test(start) ? 0 : -1;
  },
  parse,
};
