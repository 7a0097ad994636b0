// A lexical screen over filter scripts (`[?(…)]`) before they reach jsonpath-plus. Its safe
// evaluator (jsep + an AST walker, `eval: 'safe'`) never hands text to eval/Function/vm, but it
// does call functions it can reach (`@.list.push(1)` would mutate a step's output,
// `@.s.repeat(1e9)` would exhaust memory) and assigns. A filter only needs to read and compare,
// so anything beyond that is refused at compile time. The screen is deliberately blunt: it
// works on the text with string literals blanked out, and errs towards refusing.

import { FORBIDDEN_IDENTIFIERS } from './forbidden.js';

export interface ScreenProblem {
  readonly message: string;
  /** Offset inside the script. */
  readonly offset: number;
}

const STRING = /'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/gs;

interface Rule {
  readonly pattern: RegExp;
  readonly message: string;
  /** Offset of the offending character from the start of the match. */
  readonly shift?: (m: RegExpExecArray) => number;
}

const RULES: readonly Rule[] = [
  // Anything that can be called: an identifier, `@…`, a closing bracket or a literal followed by `(`.
  { pattern: /[\w$@)\]"']\s*\(/g, message: 'function calls are not allowed in filters', shift: (m) => m[0].length - 1 },
  // `=` not part of == === != !== <= >=: assignment, compound assignment, arrow functions.
  { pattern: /(?:^|[^=!<>])=(?!=)/g, message: 'assignments are not allowed in filters', shift: (m) => m[0].indexOf('=') },
  { pattern: /\+\+|--/g, message: "'++' and '--' are not allowed in filters" },
  { pattern: /\//g, message: "'/' (division or regular expressions) is not allowed in filters" },
  { pattern: /[`;{}\\]/g, message: 'template literals, statements, blocks and escapes outside strings are not allowed in filters' },
];

export function screenFilter(script: string): ScreenProblem | undefined {
  for (const m of script.matchAll(STRING)) {
    const body = m[0].slice(1, -1);
    if (FORBIDDEN_IDENTIFIERS.has(body)) {
      return { message: `'${body}' is not allowed in filters`, offset: m.index };
    }
  }
  // Blank string literals (same length, so offsets stay true) and keep their quotes, so a
  // literal still counts as an operand for the call rule.
  const blank = script.replace(STRING, (s) => `${s[0] ?? ''}${' '.repeat(s.length - 2)}${s[0] ?? ''}`);
  for (const m of blank.matchAll(/[A-Za-z_$][\w$]*/g)) {
    if (FORBIDDEN_IDENTIFIERS.has(m[0])) return { message: `'${m[0]}' is not allowed in filters`, offset: m.index };
  }
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    const m = rule.pattern.exec(blank);
    if (m) return { message: rule.message, offset: m.index + (rule.shift ? rule.shift(m) : 0) };
  }
  // An unterminated quote survives the blanking: jsep would reject it anyway, but say so here.
  if (/['"]/.test(blank.replace(/'\s*'|"\s*"/g, ''))) return { message: 'unterminated string in filter', offset: 0 };
  return undefined;
}
