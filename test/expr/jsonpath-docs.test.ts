import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileChain } from '../../src/index.js';

// docs/reference/jsonpath.md lists, for each habit from another JSONPath dialect that the engine
// refuses, the path and the message a user gets. Each is compiled here in a chain, so the page
// cannot drift from what the engine says.

const PAGE = readFileSync(new URL('../../docs/reference/jsonpath.md', import.meta.url), 'utf8');
const ENTRY = /^- [^\n]*?, `(\$[^`]*)` is refused:\n {2}> (.+)$/gm;
const entries = [...PAGE.matchAll(ENTRY)].map((m) => ({ path: m[1]!, message: m[2]! }));

describe('docs/reference/jsonpath.md', () => {
  it('lists the refused habits', () => {
    expect(entries.length).toBeGreaterThanOrEqual(20);
  });

  it.each(entries)('$path gets the message it shows', ({ path, message }) => {
    const text = `name: c\nsteps:\n  - name: s\n    tool: t\n    input_map:\n      v: ${JSON.stringify(path)}\n`;
    const { diagnostics } = compileChain(text, { file: 'c.yaml' });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'BAD_JSONPATH', pointer: '/steps/0/input_map/v', line: 6 });
    const marker = `at character ${diagnostics[0]!.offset! + 1}: `;
    expect(diagnostics[0]!.message).toContain(marker);
    expect(diagnostics[0]!.message.split(marker)[1]).toBe(message);
  });
});
