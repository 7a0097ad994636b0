// Paths beyond member/index access (wildcards, slices, unions, recursive descent, filters) are
// evaluated by jsonpath-plus 11, always with `eval: 'safe'` (its own AST interpreter; never
// 'native', which would run filter text through node:vm).
//
// jsonpath-plus re-tokenizes its path string with regular expressions that can read unusual
// names differently from what the user wrote (`['*']` becomes a wildcard). So the path handed
// to it is rebuilt from the segments already parsed, and its tokenization is compared with what
// the segments say; any disagreement is a compile-time error rather than a surprise at run time.
//
// Run-time results: a multi path gives an array of matches, empty when nothing matches (SPEC
// §2.2: "yields an array"); the engine then passes `[]`, which is an answer, not an absence.
// Filters that fail on a node (`@.a.b` where `a` is missing) just don't match it
// (`ignoreEvalErrors`), and any other failure inside jsonpath-plus is treated as no match: a
// bad node in a tool's output must not crash the run.

import { JSONPath, type JSONPathClass } from 'jsonpath-plus';
import { plainRoot } from './context.js';
import { screenFilter } from './filter-screen.js';
import type { Segment } from './path-parse.js';
import { ExprSyntaxError } from './syntax-error.js';
import type { Getter } from './types.js';

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Names jsonpath-plus would read as operators or mangle: `*`, `..`, `$`, `^`, `~`, slices,
// filters, quotes, unions, and its internal placeholders (`%@%`, `#n`).
const RISKY_NAME = /^(?:\*|\$|\^|~|@.*|\?\(.*|\(.*|-?\d*:-?\d*(?::-?\d*)?)$|['"`\\\[\]();,~^%#]|\.\./s;

interface Canonical {
  readonly text: string;
  readonly tokens: readonly string[];
}

/** The path string given to jsonpath-plus and the tokens it must split into. */
function canonicalize(segments: readonly Segment[]): Canonical {
  let text = '$';
  const tokens: string[] = [];
  for (const s of segments) {
    switch (s.kind) {
      case 'member':
        checkName(s.name, s.at);
        if (!PLAIN_NAME.test(s.name)) text += `['${s.name}']`;
        else text += text.endsWith('..') ? s.name : `.${s.name}`;
        tokens.push(s.name);
        break;
      case 'index': {
        // jsonpath-plus has no negative indexes; the one-element slice selects the same node.
        const t = s.index >= 0 ? String(s.index) : s.index === -1 ? '-1:' : `${s.index}:${s.index + 1}`;
        text += `[${t}]`;
        tokens.push(t);
        break;
      }
      case 'wildcard':
        text += '[*]';
        tokens.push('*');
        break;
      case 'descent':
        text += '..';
        tokens.push('..');
        break;
      case 'slice':
        text += `[${s.text}]`;
        tokens.push(s.text);
        break;
      case 'names': {
        for (const n of s.names) checkName(n, s.at);
        const t = s.names.map((n) => `'${n}'`).join(',');
        text += `[${t}]`;
        tokens.push(t);
        break;
      }
      case 'indexes': {
        const t = s.indexes.join(',');
        text += `[${t}]`;
        tokens.push(t);
        break;
      }
      case 'filter': {
        const problem = screenFilter(s.script);
        if (problem) throw new ExprSyntaxError(problem.message, s.scriptAt + problem.offset);
        text += `[?(${s.script})]`;
        tokens.push(`?(${s.script})`);
        break;
      }
    }
  }
  return { text, tokens };
}

function checkName(name: string, at: number): void {
  if (RISKY_NAME.test(name) || name.trim() !== name || name === '') {
    throw new ExprSyntaxError(
      `the member name '${name}' cannot be used in a path with wildcards, slices, unions or filters`,
      at,
    );
  }
}

function sameTokens(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

export function complexGetter(segments: readonly Segment[], multi: boolean): Getter {
  const { text, tokens } = canonicalize(segments);
  const read = JSONPath.toPathArray(text);
  if (read[0] === '$') read.shift();
  if (!sameTokens(read, tokens)) {
    throw new ExprSyntaxError('jsonpath-plus would read this path differently from how it is written', segments[0]?.at ?? 0);
  }

  // One instance per path: `evaluate` resets its per-call state, and runs are synchronous.
  const engine = JSONPath({
    path: text,
    json: null,
    autostart: false,
    eval: 'safe',
    wrap: true,
    ignoreEvalErrors: true,
  });

  probe(engine, text, {}, 0, () => true);
  // A filter's script is only parsed when it first meets a node, and the empty-object probe
  // gives it none, so each filter also meets one node here. Only jsep's parse errors (they carry
  // a numeric `index`) count: failures of running the script on that dummy node say nothing about
  // the path, and at run time they mean "no match".
  for (const s of segments) {
    if (s.kind === 'filter') probe(engine, `$[?(${s.script})]`, [{}], s.scriptAt, isParseError);
  }

  return (ctx) => {
    let found: unknown;
    try {
      found = engine.evaluate(text, plainRoot(ctx));
    } catch {
      found = [];
    }
    const matches = Array.isArray(found) ? found : [];
    return multi ? matches : matches[0];
  };
}

function probe(engine: JSONPathClass, text: string, json: unknown, at: number, counts: (error: unknown) => boolean): void {
  try {
    engine.evaluate(text, json);
  } catch (error) {
    if (!counts(error)) return;
    const detail = error instanceof Error ? error.message : String(error);
    throw new ExprSyntaxError(`invalid JSONPath: ${detail}`, at);
  }
}

function isParseError(error: unknown): boolean {
  return error instanceof Error && typeof (error as { index?: unknown }).index === 'number';
}
