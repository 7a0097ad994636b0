import { formatResult, newFound, type FormatContext, type FormatResult, type ToolCallFormat } from '../format.js';
import { Seeker } from './special-tokens.js';
import { tagMayFollow } from './xml-tags.js';
import { defineOwn } from '../../../common/define-own.js';

// FunctionGemma (google/functiongemma-270m-it): a call between special tokens, its arguments in a
// notation of its own, strings between <escape> tokens and everything else written bare.
//
//   <start_function_call>call:get_weather{city:<escape>Paris<escape>,days:3,units:{temp:<escape>c<escape>}}<end_function_call>
//
// An escaped value is text (typed by the parameter's schema when the tools are known: vLLM reads
// every value as JSON when it can, so `<escape>42<escape>` is 42 there without a schema); a bare
// value is a number, true, false, null, a nested `{key:value}` object or a `[value, …]` list.
// Without its <end_function_call> a call ends with the text, as vLLM reads it.
// Source: Google, "FunctionGemma model card and prompt format"; vLLM `functiongemma_tool_parser.py`.

const START = '<start_function_call>';
const END = '<end_function_call>';
const ESCAPE = '<escape>';
const HEAD = /^\s*call:([A-Za-z_][\w.-]*)\s*\{/;
/** How deep `{…}` and `[…]` may nest in an argument: hostile text never overflows the stack. */
const MAX_DEPTH = 32;

class NotationError extends Error {}

/** Reads the argument notation from `pos`; throws NotationError where it is not one. */
class Reader {
  pos: number;

  constructor(
    private readonly text: string,
    from: number,
    private readonly limit: number,
  ) {
    this.pos = from;
  }

  private space(): void {
    while (this.pos < this.limit && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  /** `key:value, …}` after an opening `{`; the text of each value that was escaped, for typing. */
  object(depth: number, escaped?: Set<string>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      this.space();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const written = /^[^:{}[\],<]+/.exec(this.text.slice(this.pos, Math.min(this.limit, this.pos + 256)))?.[0];
      const key = written?.trim() ?? '';
      if (written === undefined || key === '' || this.text[this.pos + written.length] !== ':') throw new NotationError(`expected NAME: at offset ${this.pos}`);
      this.pos += written.length + 1;
      this.space();
      if (this.text.startsWith(ESCAPE, this.pos)) escaped?.add(key);
      defineOwn(out, key, this.value(depth));
      this.space();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') throw new NotationError(`expected ',' or '}' at offset ${this.pos}`);
    }
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new NotationError('arguments nested too deep');
    if (this.text.startsWith(ESCAPE, this.pos)) {
      const end = this.text.indexOf(ESCAPE, this.pos + ESCAPE.length);
      if (end < 0 || end >= this.limit) throw new NotationError(`an <escape> at offset ${this.pos} is never closed`);
      const value = this.text.slice(this.pos + ESCAPE.length, end);
      this.pos = end + ESCAPE.length;
      return value;
    }
    const c = this.text[this.pos];
    if (c === '{') {
      this.pos++;
      return this.object(depth + 1);
    }
    if (c === '[') {
      this.pos++;
      const out: unknown[] = [];
      for (;;) {
        this.space();
        if (this.text[this.pos] === ']') {
          this.pos++;
          return out;
        }
        out.push(this.value(depth + 1));
        this.space();
        if (this.text[this.pos] === ',') this.pos++;
        else if (this.text[this.pos] !== ']') throw new NotationError(`expected ',' or ']' at offset ${this.pos}`);
      }
    }
    const bare = /^[^,}\]]*/.exec(this.text.slice(this.pos, Math.min(this.limit, this.pos + 256)))![0];
    this.pos += bare.length;
    const word = bare.trim();
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    if (/^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(word)) return Number(word);
    return word;
  }
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  const starts = new Seeker(text, START);
  const ends = new Seeker(text, END);
  for (let s = starts.find(0); s !== undefined; s = starts.find(s.end)) {
    const next = starts.find(s.end);
    const close = ends.find(s.end, next?.at);
    if (context.partial && close === undefined) {
      pending = s.at;
      break;
    }
    const limit = close?.at ?? next?.at ?? text.length;
    const span = { start: s.at, end: close?.end ?? limit };
    const head = HEAD.exec(text.slice(s.end, Math.min(limit, s.end + 256)));
    if (head === null) {
      found.problems.push({ start: span.start, end: span.end, message: 'FunctionGemma call without call:NAME{…} after <start_function_call>' });
      continue;
    }
    const name = head[1]!;
    const escaped = new Set<string>();
    try {
      const reader = new Reader(text, s.end + head[0].length, limit);
      const args = reader.object(0, escaped);
      // Escaped values are text; with the tools known, the schema types them.
      for (const key of escaped) if (typeof args[key] === 'string') defineOwn(args, key, context.value(name, key, args[key]));
      found.calls.push({ start: span.start, end: span.end, name, arguments: args });
      if (context.partial && close === undefined && tagMayFollow(text, span.end)) pending = Math.min(pending ?? s.at, s.at);
    } catch (error) {
      if (!(error instanceof NotationError)) throw error;
      found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `FunctionGemma call to '${name}': ${error.message}` });
    }
  }
  return formatResult(found.calls, found.problems, pending);
}

export const functionGemma: ToolCallFormat = {
  name: 'function-gemma',
  models: 'FunctionGemma (<start_function_call>call:NAME{…})',
  markers: '<',
  detect: (text) => text.indexOf(START),
  parse,
};
