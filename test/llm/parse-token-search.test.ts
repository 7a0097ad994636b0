import { describe, expect, it } from 'vitest';
import { findMatch, literalLead, searchText } from '../../src/llm/parse/formats/special-tokens.js';

// The formats search for their tags with regular expressions; one whose every match starts with
// the same literal text is searched for that text with indexOf first (a regular expression alone
// looks at every character of the message). It must find what the expression finds.

describe('searching for a token expression', () => {
  it('takes the literal text every match starts with, and none where a match may start otherwise', () => {
    const cases: readonly [RegExp, string][] = [
      [/<(tool_call|json)>/, '<'],
      [/<tool\s*>/, '<tool'],
      [/\[\s*[A-Za-z_]/, '['],
      [/<[\uff5c|]tool/, '<'],
      [/ab?c/, 'a'],
      [/abc{2}/, 'ab'],
      [/a*b/, ''],
      [/\\.x/, '\\'],
      [/\d+/, ''],
      [/a|b/, ''],
      [/x(?:y)|z/, ''],
      [/[a|b]c/, ''],
      [/(a|b)c/, ''],
      [/^<x>/, ''],
    ];
    for (const [re, lead] of cases) expect(literalLead(re.source), re.source).toBe(lead);
  });

  it('finds what the expression finds, from any place', () => {
    const text = 'a <tools> b <tool_call> c <|tool| d <tool  > e <toolx> [ f( [g( <｜tool▁calls｜> <TOOL>';
    const expressions = [/<(tool_call|tools?)>/g, /<tool\s*>/, /<tool\s*>/i, /\[\s*[A-Za-z_][\w.-]*\s*\(/, /<[\uff5c|]tool(?:\u2581calls)?[\uff5c|]>/g, /a|<t/, /zzz/];
    for (const re of expressions) {
      const global = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
      for (let from = 0; from <= text.length; from++) {
        global.lastIndex = from;
        const expected = global.exec(text);
        const found = findMatch(text, re, from);
        expect(found?.index, `${re.source} from ${from}`).toBe(expected?.index);
        expect(found?.[0], `${re.source} from ${from}`).toBe(expected?.[0]);
        expect(found?.[1], `${re.source} from ${from}`).toBe(expected?.[1]);
        expect(searchText(text, re, from)).toBe(expected?.index ?? -1);
      }
    }
  });
});
