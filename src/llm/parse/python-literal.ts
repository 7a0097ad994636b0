import { defineOwn } from '../../common/define-own.js';

// Calls written as Python (Llama 3.2/4 `[get_weather(city="Paris")]`, Gemma's tool_code blocks,
// Llama 3.1's `brave_search.call(query="…")`), read by a grammar of literals — the subset that
// Python's ast.literal_eval accepts, which is what vLLM's pythonic parser reads: strings (quotes
// of both kinds, triple quotes, r/b/u prefixes, adjacent strings joined), numbers, True/False/None
// (and JSON's true/false/null, which models also write), lists, tuples, dicts and keyword
// arguments. Nothing is ever evaluated: a name, an operator or an f-string where a value belongs
// is an error naming the position. Recursion is bounded, so hostile nesting cannot overflow.

export interface PyCall {
  /** As written, dots included (`brave_search.call`). */
  readonly name: string;
  readonly keywords: Record<string, unknown>;
  readonly positional: readonly unknown[];
  readonly start: number;
  readonly end: number;
}

export class PySyntaxError extends Error {
  readonly at: number;

  constructor(message: string, at: number) {
    // Thrown and caught inside the parser, and while streaming once per read of a call still
    // arriving: the stack trace would never be looked at, and capturing it was most of a read's cost.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.at = at;
  }
}

const MAX_DEPTH = 64;
// Names are read by character code: a streamed tool_code block is read again as it grows, and a
// regular expression per character was a fifth of the reading.
function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isNamePart(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}
const WORDS: Readonly<Record<string, unknown>> = { True: true, False: false, None: null, true: true, false: false, null: null };
const NUMBER = /^[-+]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?)/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"' };

export class PyReader {
  pos: number;

  constructor(
    readonly text: string,
    start = 0,
    readonly end = text.length,
  ) {
    this.pos = start;
  }

  fail(message: string, at = this.pos): never {
    throw new PySyntaxError(message, at);
  }

  /** Skips spaces, tabs and newlines (and `\` line continuations). */
  space(): void {
    const { text } = this;
    while (this.pos < this.end) {
      const c = text[this.pos]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.pos++;
      else if (c === '\\' && text[this.pos + 1] === '\n') this.pos += 2;
      else break;
    }
  }

  peek(): string | undefined {
    return this.pos < this.end ? this.text[this.pos] : undefined;
  }

  eat(c: string): boolean {
    this.space();
    if (this.peek() !== c) return false;
    this.pos++;
    return true;
  }

  expect(c: string, what: string): void {
    if (!this.eat(c)) this.fail(`expected ${what}, found ${this.describeHere()}`);
  }

  describeHere(): string {
    const c = this.peek();
    return c === undefined ? 'the end of the text' : `'${this.text.slice(this.pos, this.pos + 12)}'`;
  }

  /** A name such as `get_weather` or `default_api.get_weather`, or undefined when none starts here. */
  name(): string | undefined {
    this.space();
    const start = this.pos;
    for (;;) {
      if (this.pos >= this.end || !isNameStart(this.text.charCodeAt(this.pos))) {
        this.pos = start;
        return undefined;
      }
      while (this.pos < this.end && isNamePart(this.text.charCodeAt(this.pos))) this.pos++;
      if (this.peek() !== '.') break;
      this.pos++;
    }
    return this.text.slice(start, this.pos);
  }

  /** `name(arg, key=value, …)`. */
  call(): PyCall {
    this.space();
    const start = this.pos;
    const name = this.name();
    if (name === undefined) this.fail(`expected a function call, found ${this.describeHere()}`);
    this.expect('(', `'(' after '${name}'`);
    const keywords: Record<string, unknown> = {};
    const positional: unknown[] = [];
    while (!this.eat(')')) {
      const before = this.pos;
      const key = this.name();
      if (key !== undefined && this.eat('=')) {
        if (Object.hasOwn(keywords, key)) this.fail(`argument '${key}' is given twice`, before);
        defineOwn(keywords, key, this.value(0));
      } else {
        this.pos = before;
        positional.push(this.value(0));
      }
      if (!this.eat(',')) {
        this.expect(')', `',' or ')' in the call to '${name}'`);
        break;
      }
    }
    return { name, keywords, positional, start, end: this.pos };
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('values nested too deeply');
    this.space();
    const c = this.peek();
    if (c === undefined) this.fail('expected a value, found the end of the text');
    if (c === '[') return this.sequence(']', depth);
    if (c === '(') return this.sequence(')', depth);
    if (c === '{') return this.dict(depth);
    if (c === '"' || c === "'") return this.strings();
    const word = /^[A-Za-z_]+/.exec(this.text.slice(this.pos, Math.min(this.end, this.pos + 8)))?.[0];
    if (word !== undefined) {
      const quote = this.text[this.pos + word.length];
      if ((quote === '"' || quote === "'") && /^[rRbBuU]{1,2}$/.test(word)) return this.strings();
      if ((quote === '"' || quote === "'") && /[fF]/.test(word)) this.fail('an f-string is not a literal (it would be evaluated)');
      if (Object.hasOwn(WORDS, word) && !isNamePart(this.text.charCodeAt(this.pos + word.length))) {
        this.pos += word.length;
        return WORDS[word];
      }
      this.fail(`expected a literal value, found the name '${this.name() ?? word}' (nothing is evaluated: quote strings)`);
    }
    const number = NUMBER.exec(this.text.slice(this.pos, Math.min(this.end, this.pos + 64)))?.[0];
    if (number !== undefined && /\d/.test(number)) {
      this.pos += number.length;
      return toNumber(number);
    }
    this.fail(`expected a literal value, found ${this.describeHere()}`);
  }

  private sequence(close: string, depth: number): unknown[] {
    this.pos++;
    const items: unknown[] = [];
    while (!this.eat(close)) {
      items.push(this.value(depth + 1));
      if (!this.eat(',')) {
        this.expect(close, `',' or '${close}'`);
        break;
      }
    }
    return items;
  }

  private dict(depth: number): Record<string, unknown> {
    this.pos++;
    const out: Record<string, unknown> = {};
    while (!this.eat('}')) {
      const key = this.value(depth + 1);
      if (typeof key === 'object' && key !== null) this.fail('a dict key must be a string, a number or a constant');
      this.expect(':', `':' after a dict key`);
      defineOwn(out, String(key), this.value(depth + 1));
      if (!this.eat(',')) {
        this.expect('}', `',' or '}'`);
        break;
      }
    }
    return out;
  }

  /** One string literal, or several side by side (`"a" "b"` is `"ab"`). */
  private strings(): string {
    let out = this.string();
    for (;;) {
      const save = this.pos;
      this.space();
      const c = this.peek();
      const prefixed = /^[rRbBuU]{1,2}["']/.test(this.text.slice(this.pos, this.pos + 3));
      if (c !== '"' && c !== "'" && !prefixed) {
        this.pos = save;
        return out;
      }
      out += this.string();
    }
  }

  private string(): string {
    const prefix = /^[rRbBuU]{0,2}/.exec(this.text.slice(this.pos, this.pos + 2))![0];
    const raw = /[rR]/.test(prefix);
    this.pos += prefix.length;
    const q = this.text[this.pos]!;
    const triple = this.text.startsWith(q.repeat(3), this.pos);
    const delimiter = triple ? q.repeat(3) : q;
    const start = this.pos;
    this.pos += delimiter.length;
    let out = '';
    while (this.pos < this.end) {
      const c = this.text[this.pos]!;
      if (this.text.startsWith(delimiter, this.pos)) {
        this.pos += delimiter.length;
        return out;
      }
      if (c === '\n' && !triple) break;
      if (c === '\\') {
        const [text, length] = raw ? rawEscape(this.text, this.pos) : escape(this.text, this.pos);
        out += text;
        this.pos += length;
        continue;
      }
      out += c;
      this.pos++;
    }
    this.fail('unterminated string', start);
  }
}

function rawEscape(text: string, at: number): [string, number] {
  const next = text[at + 1];
  return next === undefined ? ['\\', 1] : [`\\${next}`, 2];
}

function escape(text: string, at: number): [string, number] {
  const next = text[at + 1];
  if (next === undefined) return ['\\', 1];
  if (next === '\n') return ['', 2];
  if (Object.hasOwn(SIMPLE_ESCAPES, next)) return [SIMPLE_ESCAPES[next]!, 2];
  const hex = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
  if (hex > 0) {
    const digits = text.slice(at + 2, at + 2 + hex);
    const code = /^[0-9a-fA-F]+$/.test(digits) && digits.length === hex ? Number.parseInt(digits, 16) : NaN;
    if (Number.isFinite(code) && code <= 0x10ffff) return [String.fromCodePoint(code), 2 + hex];
  }
  // An escape Python does not know stays as written, as Python keeps it.
  return [`\\${next}`, 2];
}

function toNumber(text: string): number {
  const clean = text.replace(/_/g, '');
  const sign = clean.startsWith('-') ? -1 : 1;
  const body = clean.replace(/^[-+]/, '');
  if (/^0[xX]/.test(body)) return sign * Number.parseInt(body.slice(2), 16);
  if (/^0[oO]/.test(body)) return sign * Number.parseInt(body.slice(2), 8);
  if (/^0[bB]/.test(body)) return sign * Number.parseInt(body.slice(2), 2);
  return sign * Number(body);
}

/** A Python literal (a dict, a list…) written as a parameter's value; undefined when it is not one. */
export function readPythonLiteral(text: string): { readonly value: unknown } | undefined {
  try {
    const reader = new PyReader(text);
    const value = reader.value(0);
    reader.space();
    return reader.pos === text.length ? { value } : undefined;
  } catch (error) {
    if (error instanceof PySyntaxError) return undefined;
    throw error;
  }
}
