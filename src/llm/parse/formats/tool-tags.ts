import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { matchBracket } from '../match-bracket.js';
import { tagMayFollow } from './xml-tags.js';

// A text protocol many prompts teach: the name in one tag, JSON arguments in the next.
//
//   <tool>calculator</tool><args>{"expr": "3**5"}</args>
//
// The args tag may be missing for a call without arguments; <arguments> works too; an args tag
// that never closes takes the complete JSON object that follows it. Closing tags are searched
// forward only, and a miss is remembered, so `<tool><tool><tool>…` stays linear.

const OPEN = /<tool\s*>/gi;
const ARGS_OPEN = /^\s*<(args|arguments)\s*>/i;
const CLOSE: Readonly<Record<string, RegExp>> = { tool: /<\/tool\s*>/gi, args: /<\/args\s*>/gi, arguments: /<\/arguments\s*>/gi };

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const misses = new Map<string, number>();
  const close = (tag: string, from: number): { at: number; after: number } | undefined => {
    const missedFrom = misses.get(tag);
    if (missedFrom !== undefined && missedFrom <= from) return undefined;
    const re = CLOSE[tag]!;
    re.lastIndex = from;
    const m = re.exec(text);
    if (m === null) {
      misses.set(tag, from);
      return undefined;
    }
    return { at: m.index, after: m.index + m[0].length };
  };
  let pending: number | undefined;
  OPEN.lastIndex = 0;
  for (let m = OPEN.exec(text); m !== null; m = OPEN.exec(text)) {
    const at = m.index;
    const nameStart = at + m[0].length;
    const nameClose = close('tool', nameStart);
    if (nameClose === undefined) {
      if (context.partial) {
        pending = at;
        break;
      }
      found.problems.push({ start: at, end: Math.min(text.length, at + 200), message: 'unterminated <tool> tag' });
      continue;
    }
    const name = text.slice(nameStart, nameClose.at).trim();
    if (name === '' || /[\s<>{}"]/.test(name)) {
      found.problems.push({ start: at, end: nameClose.after, message: '<tool> tag without a usable tool name' });
      OPEN.lastIndex = nameClose.after;
      continue;
    }
    const after = readArgs(text, nameClose.after, close);
    // While streaming, a name with nothing after it yet (or an <args> tag half arrived) may still get its <args>.
    const waiting = after === 'open' || (after.args === undefined && isArgsTagPrefix(text.slice(after.end)));
    if (context.partial && waiting) {
      pending = at;
      break;
    }
    if (after === 'open') {
      found.problems.push({ start: at, end: text.length, name, code: 'INVALID_ARGUMENTS', message: `call to '${name}': unterminated <args> tag`, raw: text.slice(at) });
      break;
    }
    const span = { start: at, end: after.end };
    // The object came, its </args> may still be on the way: read again once it has come.
    if (context.partial && after.unclosed === true && tagMayFollow(text, after.end)) pending = Math.min(pending ?? at, at);
    if (after.args === undefined) found.calls.push({ start: span.start, end: span.end, name, arguments: {} });
    else found.calls.push({ start: span.start, end: span.end, name, arguments: after.args });
    OPEN.lastIndex = after.end;
  }
  return formatResult(found.calls, found.problems, pending);
}

/** True for nothing but spaces, or the start of an args tag still arriving (`<ar`). */
function isArgsTagPrefix(rest: string): boolean {
  const start = rest.trimStart().toLowerCase();
  return start === '' || (start.length < 12 && ('<args>'.startsWith(start) || '<arguments>'.startsWith(start)));
}

/** The arguments after `</tool>`: an args tag, a bare object, or none. */
function readArgs(text: string, from: number, close: (tag: string, from: number) => { at: number; after: number } | undefined): { args: string | undefined; end: number; unclosed?: true } | 'open' {
  const rest = text.slice(from, from + 64);
  const open = ARGS_OPEN.exec(rest);
  if (open !== null) {
    const argsStart = from + open[0].length;
    const shut = close(open[1]!.toLowerCase(), argsStart);
    if (shut !== undefined) return { args: text.slice(argsStart, shut.at), end: shut.after };
    // No closing tag: take the object that follows, if it is complete.
    const brace = text.indexOf('{', argsStart);
    const end = brace >= 0 && text.slice(argsStart, brace).trim() === '' ? matchBracket(text, brace) : -1;
    return end < 0 ? 'open' : { args: text.slice(brace, end + 1), end: end + 1, unclosed: true };
  }
  if (/^\s*[{\uff5b]/.test(rest)) {
    const brace = from + rest.search(/[{\uff5b]/);
    const end = matchBracket(text, brace);
    if (end >= 0) return { args: text.slice(brace, end + 1), end: end + 1 };
  }
  return { args: undefined, end: from };
}

export const toolTags: ToolCallFormat = {
  name: 'tool-tags',
  models: 'prompted text protocols (<tool>NAME</tool><args>{…}</args>)',
  markers: '<',
  detect: (text) => {
    const at = text.indexOf('<tool');
    return at >= 0 ? at : text.indexOf('<TOOL');
  },
  parse,
};
