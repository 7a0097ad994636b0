import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats, type ToolCallFormat } from '../../src/entry/llm.js';

// The stream keeps what it knows between deltas (which characters it has seen, the keys before
// colons, where the settled text ends) instead of reading the whole text on every delta. Whatever
// the split, it must hand over the calls parseToolCalls reads in the whole text: a marker cut in
// two, a closing token arriving a character at a time, prose around the calls that looks a little
// like them. And formats that declare their markers' characters are asked only when one is there.

/** One message per built-in format, as its model writes it (the layouts of test/llm/parse-formats.test.ts). */
const MESSAGES: Readonly<Record<string, string>> = {
  harmony: '<|channel|>analysis<|message|>Need a.<|end|><|start|>assistant<|channel|>commentary to=functions.find_city <|constrain|>json<|message|>{"text":"Osaka"}<|call|>',
  'kimi-k2': '<|tool_calls_section_begin|><|tool_call_begin|>functions.find_city:0<|tool_call_argument_begin|>{"text": "Osaka"}<|tool_call_end|><|tool_calls_section_end|>',
  deepseek: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>find_city<｜tool▁sep｜>{"text": "Osaka"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  mistral: '[TOOL_CALLS]find_city[ARGS]{"text": "Osaka"}[TOOL_CALLS]local_time[CALL_ID]a1b2c3d4e[ARGS]{"tz": "Asia/Tokyo"}',
  'mistral-v7': '[TOOL_CALLS][{"name": "find_city", "arguments": {"text": "Osaka"}, "id": "a1b2c3d4e"}]',
  'qwen3-coder': '<tool_call>\n<function=find_city>\n<parameter=text>\nOsaka\n</parameter>\n</function>\n</tool_call>',
  'functionary-v3.1': '<function=find_city>{"text": "Osaka"}</function>',
  glm: '<tool_call>find_city\n<arg_key>text</arg_key>\n<arg_value>Osaka</arg_value>\n</tool_call>',
  invoke: '<minimax:tool_call>\n<invoke name="find_city">\n<parameter name="text">Osaka</parameter>\n</invoke>\n</minimax:tool_call>',
  'anthropic-legacy': '<function_calls>\n<invoke>\n<tool_name>find_city</tool_name>\n<parameters>\n<text>Osaka</text>\n</parameters>\n</invoke>\n</function_calls>',
  'function-gemma': '<start_function_call>call:find_city{text:<escape>Osaka<escape>,n:1}<end_function_call>',
  'llama3-json': '<|python_tag|>{"name": "find_city", "parameters": {"text": "Osaka"}}<|eom_id|>',
  pythonic: '```tool_code\nfind_city(text="Osaka")\nlocal_time(tz="Asia/Tokyo")\n```',
  'functionary-v3.2': '>>>find_city\n{"text": "Osaka"}>>>local_time\n{"tz": "Asia/Tokyo"}',
  granite: '<|tool_call|>[{"name": "find_city", "arguments": {"text": "Osaka"}}]',
  nemotron: '<TOOLCALL>[{"name": "find_city", "arguments": {"text": "Osaka"}}]</TOOLCALL>',
  'command-r': '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "find_city", "parameters": {"text": "Osaka"}}]<|END_ACTION|>',
  internlm: '<|action_start|><|plugin|>\n{"name": "find_city", "parameters": {"text": "Osaka"}}<|action_end|>',
  functools: 'functools[{"name": "find_city", "arguments": {"text": "Osaka"}}]',
  hermes: '<tool_call>\n{"name": "find_city", "arguments": {"text": "我下周要去大阪出差"}}\n</tool_call>\n<tool_call>\n{"name": "local_time", "arguments": {}}\n</tool_call>',
  'tool-tags': '<tool>find_city</tool><args>{"text": "Osaka"}</args>',
  json: '```json\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n```\nThen: {"name": "local_time", "arguments": {"tz": "Asia/Tokyo"}} and {"type": "tool_use", "name": "note", "id": "toolu_1"}',
};

/** Prose around the calls, with what looks a little like a marker or a key. */
const PROSE = ['', 'Let me check. ', '首先需要找到城市：', 'Note [x] and (y), {placeholders}: ', 'a {"name": "Alice", "age": 31} ', 'x > y, a=b; ', '\n\n'];

function streamed(text: string, sizes: readonly number[]): { pushed: string[]; result: ReturnType<typeof parseToolCalls> } {
  const stream = createToolCallStream();
  const pushed: string[] = [];
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = sizes[k % sizes.length]!;
    for (const call of stream.push(text.slice(i, i + size))) pushed.push(call.name);
    i += size;
  }
  return { pushed, result: stream.end() };
}

describe('createToolCallStream: any split gives the whole-text parse', () => {
  it('covers every built-in format', () => {
    const covered = new Set(Object.keys(MESSAGES).map((k) => k.replace(/-v7$/, '')));
    expect(toolCallFormats().map((f) => f.name).filter((name) => !covered.has(name))).toEqual([]);
  });

  it.each(Object.entries(MESSAGES))('%s: byte by byte, every call is handed over once, as parseToolCalls reads it', (_format, calls) => {
    const text = `Let me look that up.\n${calls}\nDone.`;
    const whole = parseToolCalls(text);
    expect(whole.problems).toEqual([]);
    expect(whole.calls.length).toBeGreaterThan(0);
    const { pushed, result } = streamed(text, [1]);
    expect(result).toEqual(whole);
    expect(pushed).toEqual(whole.calls.map((c) => c.name));
  });

  it.each(Object.entries(MESSAGES))('%s: a delta boundary anywhere (a marker cut in two or three) changes nothing', (_format, calls) => {
    const text = `Prose first. ${calls} prose after.`;
    const whole = parseToolCalls(text);
    for (let cut = 1; cut < text.length; cut++) {
      const second = Math.min(text.length, cut + 1 + (cut % 5));
      const stream = createToolCallStream();
      const pushed = [...stream.push(text.slice(0, cut)), ...stream.push(text.slice(cut, second)), ...stream.push(text.slice(second))];
      const result = stream.end();
      expect(result, `cut at ${cut} and ${second}`).toEqual(whole);
      expect(pushed, `cut at ${cut} and ${second}`).toEqual(whole.calls);
    }
  });

  it('random prose around random formats, split at random (property)', () => {
    const names = Object.keys(MESSAGES);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...PROSE), fc.constantFrom(...names)), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...PROSE),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 50 }),
        (parts, tail, sizes) => {
          const text = parts.map(([prose, name]) => `${prose}${MESSAGES[name]!}`).join('\n') + tail;
          const whole = parseToolCalls(text);
          const { pushed, result } = streamed(text, sizes);
          expect(result).toEqual(whole);
          // Each call handed over once; those read only at the end (an unclosed construct) are not pushed.
          expect(new Set(pushed).size <= whole.calls.length).toBe(true);
          for (const name of pushed) expect(whole.calls.map((c) => c.name)).toContain(name);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a JSON call in prose with no arguments key (type tool_use) is not settled unread', () => {
    const text = `${'Quiet prose with a "name": and colons: '.repeat(40)}{"name": "note", "type": "tool_use"} and more prose. `.repeat(2);
    const whole = parseToolCalls(text);
    expect(whole.calls.map((c) => c.name)).toEqual(['note', 'note']);
    for (const size of [1, 8, 64]) expect(streamed(text, [size]).result, `deltas of ${size}`).toEqual(whole);
  });
});

describe('format markers: the characters that decide which formats are asked', () => {
  /** `CALL name;` lines, declared to need a `¶` somewhere in the text. */
  function pilcrow(asked: string[]): ToolCallFormat {
    return {
      name: 'pilcrow',
      models: 'test',
      markers: '¶',
      detect: (text) => {
        asked.push(text);
        return text.indexOf('¶CALL ');
      },
      parse: (text) => ({ calls: [...text.matchAll(/¶CALL (\w+);/g)].map((m) => ({ start: m.index, end: m.index + m[0].length, name: m[1]!, arguments: {} })) }),
    };
  }

  it('a format whose characters are not in the text is not asked; one without markers always is', () => {
    const asked: string[] = [];
    let plainAsked = 0;
    const plain: ToolCallFormat = { name: 'plain', models: 'test', detect: () => (plainAsked++, -1), parse: () => ({ calls: [] }) };
    expect(parseToolCalls('no marker here', { formats: [pilcrow(asked), plain] })).toEqual({ calls: [], problems: [], content: 'no marker here' });
    expect(asked).toEqual([]);
    expect(plainAsked).toBe(1);
    expect(parseToolCalls('then ¶CALL go; done', { formats: [pilcrow(asked), plain] }).calls).toEqual([{ id: 'call_1', name: 'go', arguments: {} }]);
    expect(asked).toEqual(['then ¶CALL go; done']);
    expect(plainAsked).toBe(2);
  });

  it('every built-in format with markers finds nothing in a text without them (its detect says -1)', () => {
    for (const format of toolCallFormats()) {
      if (format.markers === undefined) continue;
      const text = Object.values(MESSAGES).join('\n').replace(new RegExp(`[${format.markers.replace(/[\]\\^-]/g, '\\$&')}]`, 'g'), ' ');
      expect(format.detect(text), format.name).toBe(-1);
    }
  });

  it('formats with many marker characters between them are each asked exactly when one of theirs is there', () => {
    // 40 formats, one distinct character each (more than the characters told apart by bits), `¶` last.
    const asked: string[] = [];
    const others: ToolCallFormat[] = Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, models: 'test', markers: String.fromCharCode(0x3b1 + i), detect: () => (asked.push(`f${i}`), -1), parse: () => ({ calls: [] }) }));
    const formats = [...others, pilcrow(asked)];
    expect(parseToolCalls('then ¶CALL go; done', { formats }).calls).toEqual([{ id: 'call_1', name: 'go', arguments: {} }]);
    // Only formats past the told-apart characters may be asked without theirs; the first ones never are.
    expect(asked.filter((name) => ['f0', 'f1', 'f29'].includes(name))).toEqual([]);
    expect(asked).toContain('then ¶CALL go; done');
    asked.length = 0;
    expect(parseToolCalls(`say ${String.fromCharCode(0x3b1 + 2)} then ¶CALL go; done`, { formats }).calls.map((c) => c.name)).toEqual(['go']);
    expect(asked).toContain('f2');
    expect(asked).not.toContain('f3');
  });

  it('refuses markers that are not a non-empty string', () => {
    for (const markers of ['', 42]) {
      expect(() => parseToolCalls('x', { formats: [{ name: 'bad', models: 'test', markers, detect: () => -1, parse: () => ({ calls: [] }) } as never] })).toThrow(
        expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/'markers' must be a non-empty string/) }),
      );
    }
  });
});

describe('createToolCallStream: hostile text stays linear in small deltas', () => {
  // What the stream looks at per delta (the characters before a colon, a `]` or a `>`) is bounded;
  // a quadratic regression shows as these running into the test timeout.
  const floods: [string, string][] = [
    ['keys and colons', '{"name": "a", "x"'.padEnd(40, ' ').concat(': ').repeat(5_000)],
    ['spaces before colons', `${' '.repeat(200)}:`.repeat(1_000)],
    ['marker tokens', '[TOOL_CALLS]a[CALL_ID]b[ARGS]'.repeat(5_000)],
    ['closing tags', '</tool_call><|call|>'.repeat(5_000)],
    ['tool_use without a brace', '{"name": "x", "type": "tool_use" '.repeat(5_000)],
  ];

  it.each(floods)('%s', (_name, text) => {
    const whole = parseToolCalls(text);
    for (const size of [3, 16]) expect(streamed(text, [size]).result, `deltas of ${size}`).toEqual(whole);
  });
});
