// I-Regexp (RFC 9485), the regular expressions of JSONPath's match() and search(), translated
// into RE2 syntax and run by re2js, a port of RE2: matching takes time linear in the length of
// the text whatever the pattern, so a pattern and a string that both come from a tool's output
// cannot stall a run the way a backtracking engine (JavaScript's RegExp) can with `(a+)+b`.
//
// The translation reads the whole I-Regexp grammar and refuses anything outside it (`\d`, `\w`,
// lookarounds, backreferences, lazy quantifiers…), which then matches nothing, as the RFC says of
// a pattern that is not an I-Regexp. Every literal character is written as `\x{…}`, so no
// character means more in RE2 than it did in I-Regexp. Two choices:
// - `.` is any character except a line feed or a carriage return (I-Regexp's rule).
// - `^` and `$` are anchors (start and end of the string), as in the JSONPath Compliance Test
//   Suite and the common implementations, though RFC 9485 lists them as ordinary characters; a
//   literal `^` is written `\^` and a literal `$` `[$]`.
// Limits: a pattern of more than MAX_PATTERN characters, and a repetition count above 1000 (RE2's
// limit), are not run: they match nothing.

import { RE2JS } from 're2js';

export type RegexpTest = (text: string) => boolean;

export const MAX_PATTERN = 4096;

const CATEGORIES = new Set('L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps Z Zl Zp Zs S Sc Sk Sm So C Cc Cf Cn Co'.split(' '));
/** Characters `\` may escape in I-Regexp (besides n, r, t). */
const ESCAPABLE = new Set('()*+-.?[\\]^{|}');

class Invalid extends Error {}

/** A test for `pattern` (the whole text for match, a part of it for search), or undefined when it is not a usable I-Regexp. */
export function compileIRegexp(pattern: string, mode: 'match' | 'search'): RegexpTest | undefined {
  if (pattern.length > MAX_PATTERN) return undefined;
  let source: string;
  try {
    source = new Translator(pattern).translate();
  } catch (error) {
    if (error instanceof Invalid) return undefined;
    throw error;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(mode === 'match' ? `^(?:${source})$` : source);
  } catch {
    return undefined;
  }
  return (text) => re.test(text);
}

class Translator {
  private i = 0;
  private readonly chars: readonly string[];

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
  }

  translate(): string {
    const out = this.branches();
    if (this.i < this.chars.length) throw new Invalid(); // an unmatched ')'
    return out;
  }

  private peek(): string | undefined {
    return this.chars[this.i];
  }

  private branches(): string {
    let out = this.branch();
    while (this.peek() === '|') {
      this.i += 1;
      out += `|${this.branch()}`;
    }
    return out;
  }

  private branch(): string {
    let out = '';
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) out += this.atom() + this.quantifier();
    return out;
  }

  private atom(): string {
    const c = this.chars[this.i++]!;
    switch (c) {
      case '(': {
        const inner = this.branches();
        if (this.chars[this.i++] !== ')') throw new Invalid();
        return `(?:${inner})`;
      }
      case '.':
        return '[^\\n\\r]';
      case '[':
        return this.charClass();
      case '\\':
        return this.escape();
      case '^':
      case '$':
        return c;
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
      case ']':
        throw new Invalid();
      default:
        return literal(c);
    }
  }

  private quantifier(): string {
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?') {
      this.i += 1;
      return c;
    }
    if (c !== '{') return '';
    this.i += 1;
    const min = this.digits();
    let max: string | undefined = min;
    if (this.peek() === ',') {
      this.i += 1;
      max = this.peek() === '}' ? undefined : this.digits();
    }
    if (this.chars[this.i++] !== '}') throw new Invalid();
    if (max !== undefined && Number(max) < Number(min)) throw new Invalid();
    return `{${Number(min)}${max === min ? '' : `,${max === undefined ? '' : Number(max)}`}}`;
  }

  private digits(): string {
    let s = '';
    while (/^[0-9]$/.test(this.peek() ?? '')) s += this.chars[this.i++];
    if (s === '') throw new Invalid();
    return s;
  }

  /** After a `\`: a single-character escape, or `\p{…}` / `\P{…}`. */
  private escape(): string {
    const c = this.chars[this.i++];
    if (c === 'n') return '\\n';
    if (c === 'r') return '\\r';
    if (c === 't') return '\\t';
    if (c === 'p' || c === 'P') {
      if (this.chars[this.i++] !== '{') throw new Invalid();
      let name = '';
      while (this.peek() !== undefined && this.peek() !== '}') name += this.chars[this.i++];
      if (this.chars[this.i++] !== '}' || !CATEGORIES.has(name)) throw new Invalid();
      return `\\${c}{${name}}`;
    }
    if (c !== undefined && ESCAPABLE.has(c)) return literal(c);
    throw new Invalid();
  }

  /** After a `[`: `[^`? then items, a leading or trailing `-` literal, up to `]`. */
  private charClass(): string {
    let out = '[';
    if (this.peek() === '^') {
      this.i += 1;
      out += '^';
    }
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new Invalid();
      if (c === ']' && !first) {
        this.i += 1;
        return `${out}]`;
      }
      if (c === '-') {
        // Literal only first or last: `[-a]`, `[a-]`.
        this.i += 1;
        if (!first && this.peek() !== ']') throw new Invalid();
        out += literal('-');
        first = false;
        continue;
      }
      if (c === '\\' && (this.chars[this.i + 1] === 'p' || this.chars[this.i + 1] === 'P')) {
        this.i += 1;
        out += this.escape();
        first = false;
        continue;
      }
      const lo = this.classChar();
      if (this.peek() === '-' && this.chars[this.i + 1] !== ']' && this.chars[this.i + 1] !== undefined) {
        this.i += 1;
        const hi = this.classChar();
        if (hi.codePointAt(0)! < lo.codePointAt(0)!) throw new Invalid();
        out += `${literal(lo)}-${literal(hi)}`;
      } else out += literal(lo);
      first = false;
    }
  }

  /** One character of a class, as itself (not yet written for RE2). */
  private classChar(): string {
    const c = this.chars[this.i++];
    if (c === undefined || c === '[' || c === ']' || c === '-') throw new Invalid();
    if (c !== '\\') return surrogateFree(c);
    const e = this.chars[this.i++];
    if (e === 'n') return '\n';
    if (e === 'r') return '\r';
    if (e === 't') return '\t';
    if (e !== undefined && ESCAPABLE.has(e)) return e;
    throw new Invalid();
  }
}

function surrogateFree(c: string): string {
  const code = c.codePointAt(0)!;
  if (code >= 0xd800 && code <= 0xdfff) throw new Invalid();
  return c;
}

/** One character for RE2, meaning only itself. */
function literal(c: string): string {
  const code = surrogateFree(c).codePointAt(0)!;
  if (/^[A-Za-z0-9]$/.test(c)) return c;
  return `\\x{${code.toString(16)}}`;
}
