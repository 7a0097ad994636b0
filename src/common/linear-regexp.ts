import { RE2JS } from 're2js';

// JSON Schema `pattern` and `patternProperties` come from chain and plugin authors and are matched
// against what callers send: with JavaScript's backtracking RegExp, `^(a+)+$` and thirty `a`s
// stall the whole process (a validator runs in the engine, whatever the tool's isolation). These
// patterns run on re2js, a port of RE2, whose matching time is linear in the length of the text.
//
// A schema pattern is ECMA-262 syntax; RE2 reads nearly all of it the same way. What differs:
// - refused (no linear-time engine can do them): lookahead `(?=…)` `(?!…)`, lookbehind
//   `(?<=…)` `(?<!…)`, backreferences `\1` `\k<name>`;
// - rewritten to what RE2 spells differently: `\uXXXX` (and surrogate pairs), `\u{…}`, `\cX`,
//   `[\b]`;
// - refused because RE2 reads them otherwise: `[^]` and `[]`;
// - read slightly differently: `\s` is ASCII whitespace only, `.` also matches `\r`, U+2028 and
//   U+2029 (it never matches `\n`).
// A pattern is first checked with JavaScript's own parser (Ajv's rule for what is a regex), so
// nothing is accepted that JavaScript would refuse.

export interface LinearRegExp {
  test(text: string): boolean;
}

export class UnsupportedPattern extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} is not supported: ${reason}`);
  }
}

export const MAX_SCHEMA_PATTERN = 4096;

const HEX = /^[0-9a-fA-F]{4}$/;

function hex4(pattern: string, at: number): number | undefined {
  const digits = pattern.slice(at, at + 4);
  return HEX.test(digits) ? Number.parseInt(digits, 16) : undefined;
}

/** `pattern` in RE2 syntax, or the reason it cannot be matched in linear time. */
export function toRe2Syntax(pattern: string): { source: string } | { reason: string } {
  if (pattern.length > MAX_SCHEMA_PATTERN) return { reason: `it is longer than ${MAX_SCHEMA_PATTERN} characters` };
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return { reason: (error as Error).message };
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (next === 'u') {
        if (pattern[i + 2] === '{') {
          const end = pattern.indexOf('}', i + 3);
          out += `\\x{${pattern.slice(i + 3, end)}}`;
          i = end;
          continue;
        }
        let code = hex4(pattern, i + 2)!;
        i += 5;
        const low = pattern.startsWith('\\u', i + 1) ? hex4(pattern, i + 3) : undefined;
        if (code >= 0xd800 && code <= 0xdbff && low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
          code = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          i += 6;
        }
        out += `\\x{${code.toString(16)}}`;
        continue;
      }
      if (next === 'c') {
        out += `\\x{${((pattern.charCodeAt(i + 2) ?? 0) % 32).toString(16)}}`;
        i += 2;
        continue;
      }
      if (next === 'b' && inClass) {
        out += '\\x{8}';
        i += 1;
        continue;
      }
      if (/[1-9]/.test(next) || next === 'k') return { reason: 'backreferences (\\1, \\k<name>) have no linear-time match' };
      out += c + next;
      i += 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      if (pattern.startsWith('[^]', i) || pattern.startsWith('[]', i)) return { reason: '`[]` and `[^]` are not supported; write `[^\\s\\S]` or `[\\s\\S]`' };
      inClass = true;
      // A `]` right after `[` or `[^` closes the class in JavaScript too (u mode refuses `[]]`).
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const head = pattern.slice(i, i + 4);
      if (head.startsWith('(?=') || head.startsWith('(?!') || head.startsWith('(?<=') || head.startsWith('(?<!')) {
        return { reason: 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) have no linear-time match' };
      }
    }
    out += c;
  }
  return { source: out };
}

/** The reason `pattern` cannot be used in a schema, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  const translated = toRe2Syntax(pattern);
  if ('reason' in translated) return translated.reason;
  try {
    RE2JS.compile(translated.source);
    return undefined;
  } catch (error) {
    return `the linear-time engine cannot read it (${(error as Error).message})`;
  }
}

/**
 * Ajv's `code.regExp`: builds a matcher for a schema pattern (flags are always `u`, which RE2
 * needs no flag for). Throws UnsupportedPattern for what it cannot run in linear time. `code` is
 * how a validator written out as source (the disk cache) finds it again: the require function
 * such code runs with resolves that name to this module.
 */
export function linearRegExp(pattern: string, _flags?: string): LinearRegExp {
  const translated = toRe2Syntax(pattern);
  if ('reason' in translated) throw new UnsupportedPattern(pattern, translated.reason);
  let re: RE2JS;
  try {
    re = RE2JS.compile(translated.source);
  } catch (error) {
    throw new UnsupportedPattern(pattern, `the linear-time engine cannot read it (${(error as Error).message})`);
  }
  // Ajv keys its compiled patterns by toString().
  return { test: (text) => re.test(text), toString: () => `/${pattern}/u` } as LinearRegExp;
}
export const LINEAR_REGEXP_MODULE = 'toolchain:linear-regexp';
linearRegExp.code = `require(${JSON.stringify(LINEAR_REGEXP_MODULE)}).linearRegExp`;

/** Every `pattern` and `patternProperties` key in a JSON Schema that cannot be used, with its JSON pointer below `base`. */
export function schemaPatternProblems(schema: unknown, base = ''): { pointer: string; pattern: string; reason: string }[] {
  const found: { pointer: string; pattern: string; reason: string }[] = [];
  const seen = new Set<object>();
  const visit = (node: unknown, at: string): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach((v, i) => visit(v, `${at}/${i}`));
      return;
    }
    const obj = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(obj)) {
      const here = `${at}/${escapePointer(key)}`;
      if (key === 'pattern' && typeof value === 'string') {
        const reason = patternProblem(value);
        if (reason) found.push({ pointer: here, pattern: value, reason });
      } else if (key === 'patternProperties' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const name of Object.keys(value)) {
          const reason = patternProblem(name);
          if (reason) found.push({ pointer: `${here}/${escapePointer(name)}`, pattern: name, reason });
        }
      }
      // `enum`, `const`, `default` and `examples` hold data, not schemas: a `pattern` key there is a value.
      if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') visit(value, here);
    }
  };
  visit(schema, base);
  return found;
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
