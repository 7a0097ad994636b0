import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats } from '../../src/entry/llm.js';
import { readFormats } from '../../src/llm/parse/read-formats.js';
import { settlePoint } from '../../src/llm/parse/settle-point.js';

// A Kimi-K2 or DeepSeek section, or a fenced JSON block, stays open until its end token, and may
// hold more calls: a stream used to read the whole block again at every trigger until it closed. A format now names a
// place inside its open claim, past the calls read so far (`resume`), and the stream settles
// there, telling the format next time that its text starts inside the block. Whatever sits in the
// section stays hidden from the formats after it, as in the whole-text parse.

const kimi = (calls: string) => `<|tool_calls_section_begin|>${calls}<|tool_calls_section_end|>`;
const kimiCall = (name: string, args: string) => `<|tool_call_begin|>functions.${name}:0<|tool_call_argument_begin|>${args}<|tool_call_end|>`;
const deepseek = (calls: string) => `<｜tool▁calls▁begin｜>${calls}<｜tool▁calls▁end｜>`;
const deepseekCall = (name: string, args: string) => `<｜tool▁call▁begin｜>${name}<｜tool▁sep｜>${args}<｜tool▁call▁end｜>`;
/** Looks like a JSON call, between two calls of a section: hidden from the catch-all there. */
const JUNK = ' {"name": "hidden", "arguments": {"x": 1}} ';

function streamed(text: string, sizes: readonly number[]): { at: number[]; result: ReturnType<typeof parseToolCalls> } {
  const stream = createToolCallStream();
  const at: number[] = [];
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = sizes[k % sizes.length]!;
    for (const _ of stream.push(text.slice(i, i + size))) at.push(Math.min(text.length, i + size));
    i += size;
  }
  return { at, result: stream.end() };
}

describe('readFormats: reading on inside an open section', () => {
  it('an open section names the place past its last call; a closed one does not', () => {
    const open = kimi(kimiCall('a', '{"x": 1}')).replace('<|tool_calls_section_end|>', ' <|tool_c');
    const read = readFormats(open, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
    expect(read.calls.map((c) => c.name)).toEqual(['a']);
    expect(read.resumes).toEqual([{ start: 0, end: open.length, at: read.calls[0]!.end, format: 'kimi-k2' }]);
    const closed = readFormats(kimi(kimiCall('a', '{"x": 1}')), toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
    expect(closed.resumes).toEqual([]);
  });

  it('told its text starts inside a section, the format claims it up to the end token, hiding it from the formats after', () => {
    for (const [format, text] of [['kimi-k2', `${JUNK}${kimiCall('b', '{}')}<|tool_calls_section_end|> then {"name": "c", "arguments": {}}`], ['deepseek', `${JUNK}${deepseekCall('b', '{}')}<｜tool▁calls▁end｜> then {"name": "c", "arguments": {}}`]] as const) {
      const read = readFormats(text, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined, inside: format });
      expect(read.calls.map((c) => c.name), format).toEqual(['b', 'c']);
      expect(read.closed[0], format).toEqual({ start: 0, end: text.indexOf(' then') });
      // Without being told, the junk is read as a call.
      const outside = readFormats(text, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
      expect(outside.calls.map((c) => c.name), format).toContain('hidden');
    }
  });
});

describe('settlePoint: the place inside an open claim', () => {
  const claim = { start: 0, end: 100 };
  it('settles at the resume place, past the tail, and says whose block the text now starts inside', () => {
    const resumes = [{ ...claim, at: 90, format: 'kimi-k2' }];
    expect(settlePoint(100, undefined, [claim, { start: 40, end: 90 }], [{ start: 40, end: 90 }], 32, resumes)).toEqual({ at: 90, inside: 'kimi-k2' });
    expect(settlePoint(100, undefined, [claim], [], 32)).toEqual({ at: 0, inside: undefined });
  });

  it('does not settle there past an unfinished construct or into another span', () => {
    const resumes = [{ ...claim, at: 90, format: 'kimi-k2' }];
    expect(settlePoint(100, 60, [claim, { start: 60, end: 100 }], [], 32, resumes)).toEqual({ at: 0, inside: undefined });
    expect(settlePoint(100, undefined, [claim, { start: 80, end: 95 }], [{ start: 80, end: 95 }], 32, resumes).inside).toBeUndefined();
  });
});

describe('createToolCallStream: sections read on from past their calls', () => {
  const messages: [string, string, string[]][] = [
    ['kimi-k2', `Let me check (twice).\n${kimi(`${kimiCall('a', '{"x": 1}')}${JUNK}${kimiCall('b', '{"y": {"z": 2}}')}`)}\nThen {"name": "c", "arguments": {}} done.`, ['<|tool_call_end|>', '<|tool_call_end|>']],
    ['deepseek', `Let me check (twice).\n${deepseek(`${deepseekCall('a', '{"x": 1}')}${JUNK}${deepseekCall('b', '{"y": {"z": 2}}')}`)}\nThen {"name": "c", "arguments": {}} done.`, ['<｜tool▁call▁end｜>', '<｜tool▁call▁end｜>']],
  ];

  it.each(messages)('%s: every call on time, the junk in the section never, whatever the delta size', (_format, text, ends) => {
    const whole = parseToolCalls(text);
    expect(whole.calls.map((c) => c.name)).toEqual(['a', 'b', 'c']);
    const first = text.indexOf(ends[0]!) + ends[0]!.length;
    const second = text.indexOf(ends[1]!, first) + ends[1]!.length;
    for (const size of [1, 2, 3, 5, 8, 13, 29]) {
      const { at, result } = streamed(text, [size]);
      expect(result, `deltas of ${size}`).toEqual(whole);
      expect(at.length, `deltas of ${size}`).toBe(3);
      expect(at[0]! >= first && at[0]! < first + size, `deltas of ${size}`).toBe(true);
      expect(at[1]! >= second && at[1]! < second + size, `deltas of ${size}`).toBe(true);
    }
  });

  it('random splits give the whole-text parse (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...messages.map((m) => m[1])), fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 40 }), (text, sizes) => {
        expect(streamed(text, sizes).result).toEqual(parseToolCalls(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a fenced JSON block read on from past its objects', () => {
  // Inside a fence a name alone makes a call; outside, an object needs an arguments key too.
  const text = 'Calling:\n```json\n{"name": "a", "arguments": {"x": 1}}\n{"name": "b"}\n```\nThen {"name": "c"} and {"name": "d", "arguments": {}} (done).';

  it('an open fence is claimed with the place past its last object; told it starts inside, the scan reads loosely up to the fence', () => {
    const open = text.slice(0, text.indexOf('```\nThen'));
    const read = readFormats(open, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
    expect(read.calls.map((c) => c.name)).toEqual(['a', 'b']);
    expect(read.resumes).toEqual([{ start: open.indexOf('```'), end: open.length, at: open.indexOf('{"name": "b"}') + 13, format: 'json' }]);
    const rest = '\n{"name": "e"}\n```\nThen {"name": "c"}';
    const inside = readFormats(rest, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined, inside: 'json' });
    expect(inside.calls.map((c) => c.name)).toEqual(['e']);
    expect(inside.closed).toContainEqual({ start: 0, end: rest.indexOf('```') + 3 });
  });

  it('streams every call on time and the prose object after the fence never, whatever the split (property)', () => {
    const whole = parseToolCalls(text);
    expect(whole.calls.map((c) => c.name)).toEqual(['a', 'b', 'd']);
    for (const size of [1, 2, 3, 5, 8, 13]) {
      const { at, result } = streamed(text, [size]);
      expect(result, `deltas of ${size}`).toEqual(whole);
      const a = text.indexOf('{"x": 1}}') + 9;
      expect(at[0]! >= a && at[0]! < a + size, `deltas of ${size}`).toBe(true);
    }
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 40 }), (sizes) => {
        expect(streamed(text, sizes).result).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });
});

describe('inside a block the stream reads on in, quiet-looking text is never settled unread', () => {
  it('a name-only object deep in a long fence is a call, handed over at its brace, whatever the delta size', () => {
    const filler = 'plain words between the objects, with nothing to read in them at all. '.repeat(4);
    const text = `Calling:\n\`\`\`json\n{"name": "a", "arguments": {}}\n${filler}{"name": "b"}\n${filler}{"name": "c"}\n${filler}\n\`\`\`\nDone.`;
    const whole = parseToolCalls(text);
    expect(whole.calls.map((c) => c.name)).toEqual(['a', 'b', 'c']);
    const b = text.indexOf('{"name": "b"}') + 13;
    for (const size of [1, 3, 8, 13, 40]) {
      const { at, result } = streamed(text, [size]);
      expect(result, `deltas of ${size}`).toEqual(whole);
      expect(at[1]! >= b && at[1]! < b + size, `deltas of ${size}`).toBe(true);
    }
  });
});
