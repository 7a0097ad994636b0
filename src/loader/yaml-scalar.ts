// Scalars for the block-YAML reader (block-yaml.ts): plain scalars typed exactly as the yaml
// library's YAML 1.2 core schema types them, single-line quoted scalars, and the text of literal
// and folded block scalars. Each returns `undefined` (or BAIL) for anything it does not read
// exactly, and the reader then leaves the whole file to the yaml library.

/** Thrown (not an Error: no stack to capture) when the text leaves the subset the reader reads exactly. */
export const BAIL = Symbol('outside the block-YAML subset');

const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const OCT = /^0o[0-7]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;
const INF_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** A plain scalar's value under the core schema (yaml's schema/core tags, same tests, same resolution). */
export function plainValue(s: string): unknown {
  const c = s.charCodeAt(0);
  // Most plain scalars are words, durations and JSONPaths: one character rules out every other type.
  if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
    if (INT.test(s)) return parseInt(s, 10);
    if (OCT.test(s)) return parseInt(s.slice(2), 8);
    if (HEX.test(s)) return parseInt(s.slice(2), 16);
    if (INF_NAN.test(s)) return s.endsWith('nan') || s.endsWith('NaN') || s.endsWith('NAN') ? NaN : s.charCodeAt(0) === 0x2d ? -Infinity : Infinity;
    if (FLOAT_EXP.test(s) || FLOAT.test(s)) return parseFloat(s);
    return s;
  }
  if (c === 0x7e || c === 0x6e || c === 0x4e) return NULL.test(s) ? null : s;
  if (c === 0x74 || c === 0x54 || c === 0x66 || c === 0x46) return BOOL.test(s) ? s.charCodeAt(0) === 0x74 || s.charCodeAt(0) === 0x54 : s;
  return s;
}

/** The JSON key a scalar key becomes (yaml's stringifyKey): null is '', anything else String(value). */
export function keyOf(value: unknown): string {
  return value === null ? '' : String(value);
}

/**
 * Characters a plain scalar may not start with (YAML's indicators). `-`, `?` and `:` may when a
 * non-space follows: `-` is read here (`-1`, `-x`), `?` and `:` starts are left to yaml.
 */
const INDICATOR = new Uint8Array(128);
for (const c of ',[]{}#&*!|>\'"%@`?:') INDICATOR[c.charCodeAt(0)] = 1;

/** A plain scalar may start at `at`: not an indicator, or a `-` with a non-space (in a flow collection, nor `,[]{}`) after it. */
export function startsPlain(text: string, at: number, inFlow: boolean): boolean {
  const code = text.charCodeAt(at);
  if (code === 0x2d) {
    const next = text.charCodeAt(at + 1);
    return next > 0x20 && !(inFlow && (next === 0x2c || next === 0x5b || next === 0x5d || next === 0x7b || next === 0x7d));
  }
  return code >= 128 || (code > 0x20 && INDICATOR[code] === 0);
}

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '"': '"', '/': '/', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '0': '\0', a: '\x07', v: '\v', e: '\x1b', ' ': ' ', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029' };
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** A quoted scalar that ends on its own line: [value, index after the closing quote], or BAIL. */
export function quoted(text: string, at: number): [string, number] {
  const quote = text.charCodeAt(at);
  let out = '';
  let from = at + 1;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) throw BAIL; // a quoted scalar over several lines is folded: left to yaml
    if (c === quote) {
      if (quote === 0x27 && text.charCodeAt(i + 1) === 0x27) {
        out += text.slice(from, i + 1);
        from = ++i + 1;
        continue;
      }
      return [out + text.slice(from, i), i + 1];
    }
    if (c === 0x5c && quote === 0x22) {
      out += text.slice(from, i);
      const e = text.charAt(i + 1);
      const digits = HEX_DIGITS[e];
      if (digits !== undefined) {
        const hex = text.slice(i + 2, i + 2 + digits);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== digits) throw BAIL;
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) throw BAIL;
        out += String.fromCodePoint(code);
        i += 1 + digits;
      } else {
        const plain = ESCAPES[e];
        if (plain === undefined) throw BAIL;
        out += plain;
        i += 1;
      }
      from = i + 1;
    }
  }
  throw BAIL;
}

/**
 * The value of a block scalar from its lines (indentation removed; '' for an empty line):
 * literal keeps the line breaks, folded joins lines with a space and turns each empty line
 * between two lines into a line break. `strip` (`-`) drops the final line break, clip keeps one.
 */
export function blockText(lines: readonly string[], folded: boolean, strip: boolean): string {
  let last = lines.length - 1;
  while (last >= 0 && lines[last] === '') last--;
  if (last < 0) return '';
  let out = '';
  if (!folded) {
    for (let i = 0; i <= last; i++) out += i === 0 ? lines[i] : `\n${lines[i]}`;
  } else {
    let empty = 0;
    let started = false;
    for (let i = 0; i <= last; i++) {
      const line = lines[i]!;
      if (line === '') {
        empty++;
        continue;
      }
      out += started ? (empty > 0 ? '\n'.repeat(empty) : ' ') : '\n'.repeat(empty);
      out += line;
      started = true;
      empty = 0;
    }
  }
  return strip ? out : `${out}\n`;
}
