import { type Claim, type FormatContext, formatResult, type FormatResult, type Found, type FoundCall, type FoundProblem, newFound, type Span, type ToolCallFormat } from '../format.js';
import { isPlaceholderName } from '../not-a-call.js';
import { PyReader, PySyntaxError, type PyCall } from '../python-literal.js';
import { findMatch, firstFound, searchText, Seeker } from './special-tokens.js';

// Calls written as Python, read with the literal grammar of python-literal.ts (never evaluated):
//
//   Llama 3.2 / 4, Gemma (list prompt):  [get_weather(city="Paris", unit="c"), get_time(tz="UTC")]
//   Llama 4:                             <|python_start|>[get_weather(city="Paris")]<|python_end|>
//   Gemma tool_code blocks:              ```tool_code\nprint(default_api.get_weather(city="Paris"))\n```
//   Llama 3.1 built-in tools:            <|python_tag|>brave_search.call(query="weather in Paris")
//
// A list without a marker counts at the start of a message (the templates ask for "no other
// text"); in the middle of prose `[note(1)]` is text, unless the tools are known and every name in
// the list is one of them (as SGLang reads a list anywhere, dropping names it was not offered).
// `print(…)`, `default_api.` / `functions.` and the built-ins' `.call` are layout, not part of
// the name. Positional arguments have no name to bind to, so they are a problem (vLLM's parser
// refuses them too).
// Source: meta-llama/Llama-3.2-1B-Instruct and Llama-4-Scout `chat_template.jinja`, Meta "Llama
// 3.1 prompt format" (built-in tools); Google, "Function calling with Gemma"; vLLM
// `pythonic_tool_parser.py`, `llama4_pythonic_tool_parser.py`.

const BARE_LIST = /^\s*\[\s*[A-Za-z_][\w.-]*\s*\(/;
/** What the start of a streamed message may look like before it shows whether it is a call list. */
const LIST_PREFIX = /^\s*(?:\[\s*(?:[A-Za-z_][\w.-]*\s*)?)?$/;
const MARKERS: readonly { readonly open: string; readonly close: readonly string[] }[] = [
  { open: '<|python_tag|>', close: ['<|eom_id|>', '<|eot_id|>'] },
  { open: '<|python_start|>', close: ['<|python_end|>'] },
  { open: '```tool_code', close: ['```'] },
];
const CALL_START = /^\s*(?:\[\s*)?[A-Za-z_][\w.-]*\s*\(/;

/** A list of calls anywhere in the text: `[`, a name, `(`. */
const A_LIST = /\[\s*[A-Za-z_][\w.-]*\s*\(/;

interface Block extends Span {
  /** Where the calls start and end inside the block. */
  readonly from: number;
  readonly to: number;
  /** The block's closing token has arrived (a bare list: its `]`). */
  readonly closed: boolean;
  /** A list in the middle of a message: calls only when every name in it is an offered tool. */
  readonly offeredOnly?: boolean;
}

/**
 * Just past the `]` that closes the list opening at `start`, or -1 when the text ends first.
 * Brackets inside Python strings (either quote, tripled or not, with backslash escapes) do not count.
 */
function listEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x27) {
      const quote = text[i]!;
      const triple = text.startsWith(quote.repeat(3), i);
      const close = triple ? quote.repeat(3) : quote;
      let j = i + close.length;
      while (j < text.length && !text.startsWith(close, j)) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (j >= text.length) return -1;
      i = j + close.length - 1;
    } else if (c === 0x5b || c === 0x28 || c === 0x7b) {
      depth++;
    } else if (c === 0x5d || c === 0x29 || c === 0x7d) {
      depth--;
      if (depth === 0) return c === 0x5d ? i + 1 : -1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

function blocks(text: string, context: FormatContext): { blocks: Block[]; pending?: number } {
  const out: Block[] = [];
  let pending: number | undefined;
  if (context.atMessageStart) {
    if (BARE_LIST.test(text)) {
      const start = text.search(/\[/);
      // A list ends at its `]`: read (and handed over by a stream) as soon as it is there.
      const end = listEnd(text, start);
      out.push(end < 0 ? { start, end: text.length, from: start, to: text.length, closed: false } : { start, end, from: start, to: end, closed: true });
    } else if (context.partial && LIST_PREFIX.test(text)) {
      pending = 0;
    }
  }
  for (const { open, close } of MARKERS) {
    const opens = new Seeker(text, open);
    const closes = close.map((token) => new Seeker(text, token));
    for (let o = opens.find(0); o !== undefined; o = opens.find(o.end)) {
      const at = o.at;
      const from = o.end;
      // A block ends at its closing token, or where the next block of its kind starts.
      const next = opens.find(from)?.at ?? text.length;
      if (!CALL_START.test(text.slice(from, from + 200))) {
        // While streaming, the last marker may still be followed by a call.
        const rest = next === text.length && text.length - from < 200 ? text.slice(from) : undefined;
        if (context.partial && rest !== undefined && !/[^\s\w.[(-]/.test(rest)) pending = Math.min(pending ?? at, at);
        continue;
      }
      const end = firstFound(closes, from, next);
      const to = end?.at ?? next;
      out.push({ start: at, end: end?.end ?? to, from, to, closed: end !== undefined });
    }
  }
  // With the tools known, a list anywhere is read, and counts when every name in it is an offered tool.
  if (context.tools !== undefined && text.includes('[')) {
    const taken = out.slice();
    let next = 0;
    for (let m = findMatch(text, A_LIST); m !== null; m = findMatch(text, A_LIST, next)) {
      next = m.index + m[0].length;
      const at = m.index;
      if (taken.some((b) => at >= b.start && at < b.end)) continue;
      const end = listEnd(text, at);
      if (end < 0) {
        // While streaming, a list still arriving; at the end, text.
        if (context.partial) pending = Math.min(pending ?? at, at);
        break;
      }
      out.push({ start: at, end, from: at, to: end, closed: true, offeredOnly: true });
      next = end;
    }
  }
  return pending === undefined ? { blocks: out } : { blocks: out, pending };
}

/** `default_api.get_weather` → get_weather; `brave_search.call` → brave_search. */
function callName(written: string): string {
  return written.replace(/^(?:default_api|functions)\./, '').replace(/\.call$/, '');
}

function toFound(call: PyCall): FoundCall | FoundProblem {
  const name = callName(call.name);
  if (call.positional.length > 0) {
    return { start: call.start, end: call.end, name, code: 'INVALID_ARGUMENTS', message: `call to '${name}' passes ${call.positional.length} argument(s) without a name: write them as name=value` };
  }
  return { start: call.start, end: call.end, name, arguments: call.keywords };
}

/**
 * The calls of one block: a list, or calls one after another (lines, `;`), each possibly inside
 * print(…). Returns where reading stopped, or undefined when a streamed block is not complete yet.
 */
function readBlock(text: string, block: Block, context: FormatContext, out: Found): number | undefined {
  const reader = new PyReader(text, block.from, block.to);
  let current = block.from;
  try {
    reader.space();
    const list = reader.eat('[');
    for (;;) {
      reader.space();
      while (reader.eat(';') || reader.eat(',')) reader.space();
      if (reader.pos >= block.to || (list && reader.eat(']'))) break;
      current = reader.pos;
      const save = reader.pos;
      const wrapper = reader.name();
      let call: PyCall;
      if (wrapper === 'print' && reader.eat('(')) {
        call = reader.call();
        reader.expect(')', "')' closing print(")
      } else {
        reader.pos = save;
        call = reader.call();
      }
      if (isPlaceholderName(callName(call.name), context.tools)) continue;
      const found = toFound(call);
      if ('arguments' in found) out.calls.push(found);
      else out.problems.push(found);
      if (list && !reader.eat(',')) {
        reader.expect(']', "',' or ']' in the list of calls");
        break;
      }
    }
    return list ? reader.pos : block.end;
  } catch (error) {
    if (!(error instanceof PySyntaxError)) throw error;
    // While streaming, running out of text (or a closing token half arrived) is not an error yet; a wrong character well before the end is.
    const ranOut = error.at >= block.to - 16 || /end of the text|unterminated/.test(error.message);
    if (context.partial && !block.closed && ranOut) return undefined;
    const name = /^\s*(?:print\(\s*)?([A-Za-z_][\w.-]*)/.exec(text.slice(current, block.to))?.[1];
    if (name !== undefined && isPlaceholderName(callName(name), context.tools)) return block.end;
    out.problems.push({
      start: current,
      end: block.to,
      message: `Python-style call${name ? ` to '${callName(name)}'` : ''} could not be read at offset ${error.at}: ${error.message}`,
      ...(name ? { name: callName(name) } : {}),
    });
    return block.end;
  }
}

/** What the reader passes over between calls: spaces, tabs, newlines, `;`, `,` and the backslash of a line continuation. */
const BETWEEN_CALLS = new Set([0x20, 0x09, 0x0a, 0x0d, 0x3b, 0x2c, 0x5c]);

/**
 * False when a block still arriving cannot end in a finished call: its last character, less what
 * the reader passes over between calls, is no `)` and no `]`, so reading it would only run out of
 * text in the call still being written. A stream reads at every `)` of a tool_code block, and
 * reading the calls before the unfinished one cost more than the rest of such a read.
 */
function mayEndInCall(text: string, block: Block): boolean {
  let i = block.to - 1;
  while (i >= block.from && BETWEEN_CALLS.has(text.charCodeAt(i))) i--;
  const c = text.charCodeAt(i);
  return c === 0x29 || c === 0x5d;
}

/**
 * A list in the middle of a message: its calls when every name in it is an offered tool (its
 * problems too, a positional argument say), else nothing — a list of other names is text.
 */
function readOffered(text: string, block: Block, context: FormatContext, out: Found, claims: Claim[]): void {
  const own = newFound();
  readBlock(text, block, context, own);
  const names = [...own.calls.map((c) => c.name), ...own.problems.map((p) => p.name)];
  if (names.length === 0 || !names.every((name) => name !== undefined && context.tools?.has(name) === true)) return;
  out.calls.push(...own.calls);
  out.problems.push(...own.problems);
  claims.push({ start: block.start, end: block.end, closed: true });
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = blocks(text, context);
  const out = newFound();
  let pending = found.pending;
  const claims: Claim[] = [];
  for (const block of found.blocks) {
    if (block.offeredOnly === true) {
      readOffered(text, block, context, out, claims);
      continue;
    }
    const calls = out.calls.length;
    const stop = context.partial && !block.closed && !mayEndInCall(text, block) ? undefined : readBlock(text, block, context, out);
    if (stop === undefined || (context.partial && !block.closed && out.calls.length === calls)) {
      // Still arriving: what it holds so far is read again once it is complete.
      out.calls.length = calls;
      pending = Math.min(pending ?? block.start, block.start);
      continue;
    }
    // A list ends at its `]`; a marked block at its closing token.
    claims.push(block.closed ? { start: block.start, end: block.end, closed: true } : { start: block.start, end: Math.min(block.end, stop) });
  }
  return formatResult(out.calls, out.problems, pending, claims);
}

export const pythonic: ToolCallFormat = {
  name: 'pythonic',
  models: 'Llama 3.2 / 4 call lists, Gemma tool_code, Llama 3.1 built-ins (brave_search.call)',
  detect: (text) => {
    // One-character searches first: a whole marker searched in a CJK text costs far more.
    const tag = text.indexOf('<') < 0 ? -1 : text.indexOf('<|python_');
    if (tag >= 0) return tag;
    const code = text.indexOf('`') < 0 ? -1 : text.indexOf('```tool_code');
    if (code >= 0) return code;
    // A list at the start of the message (or, while streaming, a start that may become one).
    let i = 0;
    while (i < text.length && i < 256 && text.charCodeAt(i) <= 32) i++;
    if (i >= text.length || text[i] === '[') return i;
    // A list anywhere (read only when the tools are known).
    return text.indexOf('[', i) < 0 ? -1 : searchText(text, A_LIST, i);
  },
  parse,
};
