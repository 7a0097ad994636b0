import { describe, expect, it } from 'vitest';
import { RecentDeltas } from '../../src/llm/parse/recent-deltas.js';
import { ToolUseWatch } from '../../src/llm/parse/tool-use-watch.js';

// The stream watches for `tool_use` around each underscore as it arrives, in the last deltas,
// instead of searching the whole unsettled text: the word must be seen however it is cut.

function watched(pieces: readonly string[]): boolean {
  const watch = new ToolUseWatch();
  const recent = new RecentDeltas();
  let length = 0;
  for (const piece of pieces) {
    recent.add(piece);
    length += piece.length;
    if (watch.watching(piece.includes('_'))) watch.look(piece, length, recent);
  }
  return watch.found;
}

describe('ToolUseWatch: tool_use seen however the deltas cut it', () => {
  const texts: [string, boolean][] = [
    ['{"type": "tool_use", "name": "note"}', true],
    ['snake_case and more_words, then tool_use', true],
    ['tool_used_here', true],
    ['a tool_us e and tool _use', false],
    ['no underscore at all', false],
    ['tool_', false],
  ];

  it.each(texts)('%s', (text, found) => {
    for (let cut = 0; cut <= text.length; cut++) {
      for (let second = cut; second <= text.length; second += 3) {
        expect(watched([text.slice(0, cut), text.slice(cut, second), text.slice(second)]), `cut at ${cut} and ${second}`).toBe(found);
      }
    }
    expect(watched([...text]), 'a character at a time').toBe(found);
  });

  it('starts again on a new text', () => {
    const watch = new ToolUseWatch();
    watch.reset('x tool_use y', true);
    expect(watch.found).toBe(true);
    watch.reset('plain text', false);
    expect(watch.found).toBe(false);
    // A `_` at the end is still watched: the next delta may finish the word.
    watch.reset('a tool_', true);
    expect(watch.watching(false)).toBe(true);
  });
});
