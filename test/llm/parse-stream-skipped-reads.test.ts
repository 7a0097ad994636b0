import { afterEach, describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats, type ToolCallFormat } from '../../src/entry/llm.js';
import { pythonic } from '../../src/llm/parse/formats/pythonic.js';

// Reads and checks the stream can tell in advance would find nothing:
// - A backtick makes the stream read only when it completes the ``` that closes a tool_code
//   block: a JSON fence's objects are read as each one closes (at its `}`), so reading at the
//   fence's backticks, opening or closing, finds nothing.
// - A colon outside every object is no key of a JSON call (one is read from its brace): prose
//   with `name:` and `arguments:` in it stays calm, and its closing characters read nothing.
// Skipping them may never cost a call: each is still handed over by the push that completes it,
// the push at which a stream that reads at every delta hands it over, and end() returns what
// parseToolCalls returns for the whole text.

const PROSE = 'Sure — let me work this out (step by step). Note that {placeholders} are not calls, nor is {"name": "Alice", "age": 31}. ';

/** Fences of every kind the built-in formats meet, with prose (parentheses, braces, inline `code`) around. */
const MESSAGES: readonly string[] = [
  // The json bench message: a fenced call, then a bare one.
  '```json\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n```\nThen: {"name": "local_time", "arguments": {"timezone": "Asia/Tokyo"}}',
  // Inside a fence a name alone makes a call; two objects in one fence; a four-backtick fence.
  '```\n{"name": "a"}\n{"name": "b", "arguments": {"x": 1}}\n```\nand `inline` code, then ````json\n{"name": "c"}\n````',
  // A fence left open until the end of the message.
  'Here: ```json\n{"name": "a", "arguments": {}}\n{"name": "b"',
  '```tool_code\nfind_city(text="Osaka")\nlocal_time(timezone="Asia/Tokyo")\n```',
  '```tool_code\nprint(default_api.find_city(text="Osaka"))\n```\n```json\n{"name": "b"}\n```',
  '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>find_city\n```json\n{"text": "Osaka"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  '<tool_call>\n```json\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n```\n</tool_call>',
  // Keys outside objects, then calls whose keys and colons arrive apart, quoted or not.
  'Note: name: x, arguments: y (z). Then {"name": "a", "arguments": {"k": "v: w"}} and {name: "b", arguments: {}} at 10:30 (ok).',
  'x {"name"\n: "c", "input"\n:\n{}} y {"type": "tool_use", "name": "d", "id": "toolu_1"} z',
];

/** The built-in formats as copies: not built in, so a stream given them reads at every delta. */
const everyDelta: readonly ToolCallFormat[] = toolCallFormats().map((f) => ({ ...f }));

/** The length of text pushed when each call was handed over (by name), and the end result. */
function handedOver(text: string, size: number, formats?: readonly ToolCallFormat[]): { at: string[]; result: ReturnType<typeof parseToolCalls> } {
  const stream = createToolCallStream(formats === undefined ? undefined : { formats });
  const at: string[] = [];
  for (let i = 0; i < text.length; i += size) for (const call of stream.push(text.slice(i, i + size))) at.push(`${call.name}@${Math.min(text.length, i + size)}`);
  return { at, result: stream.end() };
}

describe('reads a stream skips', () => {
  it('hands every call over at the push a stream reading at every delta does, whatever the delta size', () => {
    for (const calls of MESSAGES) {
      const text = `${PROSE.repeat(3)}\n\n${calls}\n\n${PROSE.repeat(2)}`;
      const whole = parseToolCalls(text);
      expect(whole.calls.length, calls).toBeGreaterThan(0);
      for (let size = 1; size <= 13; size++) {
        const reference = handedOver(text, size, everyDelta);
        const { at, result } = handedOver(text, size);
        expect(reference.result, `${calls}, deltas of ${size}`).toEqual(whole);
        expect(result, `${calls}, deltas of ${size}`).toEqual(whole);
        expect(at, `${calls}, deltas of ${size}`).toEqual(reference.at);
      }
    }
  });

  describe('when the stream reads (every read asks pythonic, which names no marker characters)', () => {
    const detect = pythonic.detect;
    afterEach(() => {
      (pythonic as { detect: ToolCallFormat['detect'] }).detect = detect;
    });

    /** The deltas during whose push the formats were read ('end' for the read of end()). */
    function readAt(text: string, size: number): string[] {
      const at: string[] = [];
      let current = '';
      (pythonic as { detect: ToolCallFormat['detect'] }).detect = (t) => {
        at.push(current);
        return detect(t);
      };
      const stream = createToolCallStream();
      for (let i = 0; i < text.length; i += size) stream.push((current = text.slice(i, i + size)));
      current = 'end';
      stream.end();
      return at;
    }

    it('a fenced JSON call is read at its braces only, not at the backticks of its fence', () => {
      const text = `${PROSE}\n\`\`\`json\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n\`\`\`\nThen more words.`;
      for (let size = 1; size <= 13; size++) {
        const at = readAt(text, size);
        expect(at.length, `deltas of ${size}`).toBeGreaterThan(0);
        for (const delta of at) expect(delta === 'end' || delta.includes('}'), `deltas of ${size}: read at ${JSON.stringify(delta)}`).toBe(true);
      }
    });

    it('prose with key words before colons outside any object is not read at its closing characters', () => {
      const text = `${'Notes (draft) — name: Alice, arguments: none (really), tool: none {placeholder}. '.repeat(4)}Done.`;
      expect(parseToolCalls(text)).toEqual({ calls: [], problems: [], content: text });
      for (let size = 1; size <= 13; size++) expect(readAt(text, size), `deltas of ${size}`).toEqual([]);
    });

    it('a tool_code block is read at the fence that closes it, not at the one that opens it', () => {
      const text = `Sure, let me look.\n\`\`\`tool_code\nfind_city(text="Osaka")  \nlocal_time(tz="Asia/Tokyo")  \n\`\`\`\nDone.`;
      const closing = text.lastIndexOf('```') + 2;
      for (let size = 1; size <= 13; size++) {
        const at = readAt(text, size);
        const last = text.slice(closing - (closing % size), closing - (closing % size) + size);
        expect(at, `deltas of ${size}`).toContain(last);
        for (const delta of at) expect(delta === last || delta.includes(')'), `deltas of ${size}: read at ${JSON.stringify(delta)}`).toBe(true);
      }
    });
  });
});
