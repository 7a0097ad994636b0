import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats } from '../../src/entry/llm.js';
import { readFormats } from '../../src/llm/parse/read-formats.js';
import { CLOSING_TAG, CLOSERS_ONLY } from '../../src/llm/parse/stream-chars.js';

// Reads the stream can tell in advance would find nothing new: a tool_code block whose text does
// not end in a call's `)` (the next call is still being written), a tag closed inside a call
// (`</parameter>`), text of nothing but closing tags after the calls. Skipping them may never cost
// a call: whatever the split, each is handed over by the push that completes it, and end()
// returns what parseToolCalls returns for the whole text.

const read = (text: string) => readFormats(text, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
const names = (text: string) => read(text).calls.map((c) => c.name);

/** The length of the text pushed when each call was handed over, for deltas of `size`. */
function handedOver(text: string, size: number): { at: number[]; result: ReturnType<typeof parseToolCalls> } {
  const stream = createToolCallStream();
  const at: number[] = [];
  for (let i = 0; i < text.length; i += size) for (const _ of stream.push(text.slice(i, i + size))) at.push(Math.min(text.length, i + size));
  return { at, result: stream.end() };
}

describe('a Python block still arriving is read only when its text can end in a finished call', () => {
  it('hands over the calls when the text ends after a call, less spaces and separators', () => {
    expect(names('```tool_code\na(x=1)\nb(y=2)\n')).toEqual(['a', 'b']);
    expect(names('```tool_code\na(x=1); b(y=2);  \\\n')).toEqual(['a', 'b']);
    expect(names('<|python_start|>[a(x=1), b(y=2)]')).toEqual(['a', 'b']);
    expect(names('<|python_start|>[a(x=1), b(y=2),')).toEqual(['a', 'b']);
    expect(names('```tool_code\nprint(a(x=1))')).toEqual(['a']);
  });

  it('reports the block as unfinished while a call is being written', () => {
    for (const text of ['```tool_code\na(x=1)\nb(y=', '```tool_code\na(x=1)\nb', '```tool_code\na(x="x)', '<|python_start|>[a(x=1), b(y=2']) {
      const result = read(text);
      expect(result.calls, text).toEqual([]);
      expect(result.pending, text).toBe(0);
    }
  });

  it('streams each call of a tool_code block by the push that completes it, whatever the delta size', () => {
    const text = 'Let me look (twice).\n```tool_code\nfind_city(text="Osaka")\nlocal_time(tz="Asia/Tokyo")\n```\nDone (ok).';
    const whole = parseToolCalls(text);
    expect(whole.calls.map((c) => c.name)).toEqual(['find_city', 'local_time']);
    const first = text.indexOf('")') + 2;
    const second = text.indexOf('")', first) + 2;
    for (const size of [1, 2, 3, 5, 8, 13, 40]) {
      // Deltas that end right after a call's `)` (or its newline) hand it over there.
      const ends = (end: number) => end % size === 0 || (end + 1) % size === 0;
      const { at, result } = handedOver(text, size);
      expect(result, `deltas of ${size}`).toEqual(whole);
      expect(at.length, `deltas of ${size}`).toBe(2);
      // A call is handed over once the text after it shows no call being written, at the latest with the fence.
      expect(at[0], `deltas of ${size}`).toBeGreaterThanOrEqual(first);
      expect(at[1], `deltas of ${size}`).toBeGreaterThanOrEqual(second);
      expect(at[1], `deltas of ${size}`).toBeLessThan(text.indexOf('```\nDone') + 3 + size);
      if (ends(first)) expect(at[0], `deltas of ${size}`).toBeLessThan(first + 2);
      if (ends(second)) expect(at[1], `deltas of ${size}`).toBeLessThan(second + 2);
    }
  });
});

describe('which closing tags make the stream read', () => {
  it('a tag that may end a call or a block reads; a tag inside a call does not', () => {
    for (const tag of ['</tool_call>', '</function>', '</invoke>', '</minimax:tool_call>', '</\uff5cDSML\uff5cinvoke>', '</function_calls>', '</tool >', '</args>', '</TOOLCALL>', '</think>', '<|call|>', '<|tool_call_end|>', '<|eom_id|>', '<\uff5ctool\u2581call\u2581end\uff5c>']) {
      expect(CLOSING_TAG.test(tag), tag).toBe(true);
    }
    for (const tag of ['</parameter>', '</arg_key>', '</arg_value>', '</tool_name>', '</parameters>', '<tool_call>', '<|tool_call_begin|>']) expect(CLOSING_TAG.test(tag), tag).toBe(false);
  });

  it('text of nothing but closing tags (then words) is known to hold no call', () => {
    for (const text of ['\n</tool_call>', '<|call|>\n\nSure', '\n</minimax:tool_call>\n\nSure ', '<|tool_calls_section_end|>\n']) expect(CLOSERS_ONLY.test(text), text).toBe(true);
    for (const text of ['</tool_call>\n<tool_call>', '<|call|> [TOOL_CALLS]', '</tool_call> {"a": 1}', '<|tool_call|>', '</tool_call> ```']) expect(CLOSERS_ONLY.test(text), text).toBe(false);
  });

  it('after a block\'s closing tag, a call of another format that follows is still handed over on time', () => {
    const blocks = [
      '<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>',
      '<minimax:tool_call>\n<invoke name="a">\n<parameter name="x">1</parameter>\n</invoke>\n</minimax:tool_call>',
      '<|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x": 1}<|call|>',
    ];
    for (const block of blocks) {
      const text = `Let me look (once).\n${block}\nand then [TOOL_CALLS]b[ARGS]{"y": 2} and {"name": "c", "arguments": {}} done (ok).`;
      const whole = parseToolCalls(text);
      expect(whole.calls.map((c) => c.name), block).toEqual(['a', 'b', 'c']);
      const b = text.indexOf('{"y": 2}') + 8;
      const c = text.indexOf('{}}') + 3;
      for (const size of [1, 2, 3, 5, 8, 13]) {
        const { at, result } = handedOver(text, size);
        expect(result, `deltas of ${size}`).toEqual(whole);
        expect(at[1]! >= b && at[1]! < b + size, `${block}, deltas of ${size}`).toBe(true);
        expect(at[2]! >= c && at[2]! < c + size, `${block}, deltas of ${size}`).toBe(true);
      }
    }
  });
});

describe('what the calm watches comes back with it', () => {
  it('a tool_use object after a block read while the stream was not calm is still a call, however the deltas fall', () => {
    const filler = 'Plain words with a colon: here, and (notes) in parentheses. '.repeat(80);
    for (const block of ['<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>', '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>']) {
      const text = `${filler}${block} my_tool then {"type": "tool_use", "name": "b", "id": "toolu_1"} ${filler}`;
      const whole = parseToolCalls(text);
      expect(whole.calls.map((c) => c.name)).toEqual(['a', 'b']);
      for (const size of [1, 2, 3, 5, 7, 8, 13, 64]) expect(handedOver(text, size).result, `deltas of ${size}`).toEqual(whole);
    }
  });
});
