// The cursor the JSONPath parser moves over a path's text: where it is, how deep it has nested,
// and how a problem is reported (the offset and, in words, what was expected there).

import { ExprSyntaxError } from './syntax-error.js';

/** Nesting allowed in one path (filters inside filters, parentheses, function arguments). */
export const MAX_PATH_DEPTH = 64;

export class Scanner {
  pos = 0;
  private depth = 0;

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  /** The character `k` places ahead ('' past the end). */
  peek(k = 0): string {
    return this.text[this.pos + k] ?? '';
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  /** Skips the blanks the RFC allows between tokens (space, tab, line feed, carriage return). */
  skipBlank(): void {
    while (isBlank(this.peek())) this.pos += 1;
  }

  fail(message: string, at = this.pos): never {
    throw new ExprSyntaxError(message, at);
  }

  /** "expected X, found Y" at `at`. */
  expected(what: string, at = this.pos): never {
    throw new ExprSyntaxError(`expected ${what}, found ${describeAt(this.text, at)}`, at);
  }

  enter(at: number): void {
    this.depth += 1;
    if (this.depth > MAX_PATH_DEPTH) this.fail(`the path nests too deeply (more than ${MAX_PATH_DEPTH} levels of filters, parentheses and function calls)`, at);
  }

  leave(): void {
    this.depth -= 1;
  }
}

export function isBlank(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** The character at `at` in words, for messages: `'x'`, `a space`, `the end of the path`. */
export function describeAt(text: string, at: number): string {
  if (at >= text.length) return 'the end of the path';
  const c = String.fromCodePoint(text.codePointAt(at)!);
  switch (c) {
    case ' ':
      return 'a space';
    case '\t':
      return 'a tab';
    case '\n':
    case '\r':
      return 'a line break';
    default: {
      const code = c.codePointAt(0)!;
      return code < 0x20 || code === 0x7f ? `the control character ${codePoint(code)}` : `'${c}'`;
    }
  }
}

export function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
