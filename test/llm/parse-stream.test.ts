import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, type ToolCallFormat } from '../../src/entry/llm.js';

// Streamed chat completions (`stream: true`), in the wire shape of /v1/chat/completions chunks.

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }] };
}

const frag = (index: number, fields: { id?: string; name?: string; args?: string }) => ({
  index,
  ...(fields.id ? { id: fields.id, type: 'function' } : {}),
  function: { ...(fields.name !== undefined ? { name: fields.name } : {}), ...(fields.args !== undefined ? { arguments: fields.args } : {}) },
});

/** Splits `text` into pieces of `size` characters, as a server streams arguments. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('parseToolCalls: streamed chunks', () => {
  it('assembles interleaved calls by index, with skipped indices and arguments split mid-string and mid-escape', () => {
    const argsA = JSON.stringify({ city: '北京', filters: '{"nested": "json, with \\"quotes\\""}' });
    const argsB = JSON.stringify({ timezone: 'Asia/Tokyo' });
    const a = pieces(argsA, 3);
    const b = pieces(argsB, 5);
    const chunks: unknown[] = [
      chunk({ role: 'assistant', content: null }),
      chunk({ tool_calls: [frag(0, { id: 'call_A', name: 'get_weather', args: '' })] }),
      chunk({ tool_calls: [frag(3, { id: 'call_B', name: 'local_time', args: '' })] }),
    ];
    // Interleave the two calls' argument pieces.
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i] !== undefined) chunks.push(chunk({ tool_calls: [frag(0, { args: a[i] })] }));
      if (b[i] !== undefined) chunks.push(chunk({ tool_calls: [frag(3, { args: b[i] })] }));
    }
    chunks.push(chunk({}, 'tool_calls'));
    chunks.push({ id: 'chatcmpl-9', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } });

    const { calls, problems } = parseToolCalls(chunks);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_A', name: 'get_weather', arguments: JSON.parse(argsA) },
      { id: 'call_B', name: 'local_time', arguments: { timezone: 'Asia/Tokyo' } },
    ]);
  });

  it('orders calls by index, not by arrival, and accepts the deltas themselves', () => {
    const deltas = [
      { tool_calls: [frag(5, { id: 'late', name: 'b', args: '{"n":' })] },
      { tool_calls: [frag(2, { id: 'early', name: 'a', args: '{}' })] },
      { tool_calls: [frag(5, { args: '2}' })] },
    ];
    expect(parseToolCalls(deltas).calls).toEqual([
      { id: 'early', name: 'a', arguments: {} },
      { id: 'late', name: 'b', arguments: { n: 2 } },
    ]);
  });

  it('does not double a name that a server repeats in every fragment', () => {
    const deltas = [{ tool_calls: [frag(0, { id: 'x', name: 'find_city', args: '{"text":' })] }, { tool_calls: [frag(0, { name: 'find_city', args: '"Osaka"}' })] }];
    expect(parseToolCalls(deltas).calls).toEqual([{ id: 'x', name: 'find_city', arguments: { text: 'Osaka' } }]);
  });

  it('reports a call whose pieces do not join into JSON, keeping its id and name', () => {
    const { calls, problems } = parseToolCalls([
      chunk({ tool_calls: [frag(0, { id: 'ok', name: 'a', args: '{}' })] }),
      chunk({ tool_calls: [frag(1, { id: 'cut', name: 'b', args: '{"text": "the stream ended' })] }),
      chunk({ tool_calls: [frag(2, { id: 'anon', args: '{}' })] }),
    ]);
    expect(calls).toEqual([{ id: 'ok', name: 'a', arguments: {} }]);
    expect(problems).toEqual([
      { code: 'INVALID_ARGUMENTS', message: expect.stringMatching(/call to 'b': the arguments are not valid JSON/), raw: '{"text": "the stream ended', id: 'cut', name: 'b', format: 'openai' },
      { code: 'UNREADABLE_CALL', message: expect.stringMatching(/index 2 has no name/), raw: '{}', id: 'anon', format: 'openai' },
    ]);
  });

  it('parses the streamed text when there are no tool-call deltas (a text-protocol model)', () => {
    const text = 'Let me look. <tool>find_city</tool><args>{"text": "Where is Osaka?"}</args>';
    const chunks = [chunk({ role: 'assistant', content: '' }), ...pieces(text, 7).map((p) => chunk({ content: p })), chunk({}, 'stop')];
    expect(parseToolCalls(chunks)).toEqual({ calls: [{ id: 'call_1', name: 'find_city', arguments: { text: 'Where is Osaka?' } }], problems: [], content: 'Let me look.' });
  });

  it('assembles 200 chunks of one call', () => {
    const big = JSON.stringify({ items: Array.from({ length: 150 }, (_, i) => `item-${i}`) });
    const parts = pieces(big, Math.floor(big.length / 199));
    const chunks = [chunk({ tool_calls: [frag(0, { id: 'c', name: 'store', args: '' })] }), ...parts.map((p) => chunk({ tool_calls: [frag(0, { args: p })] }))];
    expect(chunks.length).toBeGreaterThanOrEqual(200);
    expect(parseToolCalls(chunks).calls[0]!.arguments).toEqual(JSON.parse(big));
  });

  it('reports elements that are not chunks, and a single chunk object is read like a stream of one', () => {
    const { problems } = parseToolCalls([chunk({ tool_calls: [frag(0, { id: 'a', name: 'x', args: '{}' })] }), 'garbage', { what: 1 }]);
    expect(problems.map((p) => p.raw)).toEqual(['"garbage"', '{"what":1}']);
    expect(parseToolCalls(chunk({ tool_calls: [frag(0, { id: 'a', name: 'x', args: '{"q":1}' })] })).calls).toEqual([{ id: 'a', name: 'x', arguments: { q: 1 } }]);
  });
});

describe('createToolCallStream: calls out of a message while it streams in', () => {
  const prose = 'Let me think about which tools I need here, and in which order, before I call anything at all.\n';
  /** [format, text, calls expected, what completes each call (or: the earliest and the latest text that may)]. */
  const fixtures: [string, string, string[], (string | [string, string])[]][] = [
    ['hermes', `${prose}<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\nthen\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>\nDone.`, ['a', 'b'], ['</tool_call>', '</tool_call>']],
    ['harmony', `${prose}<|channel|>analysis<|message|>Need a.<|end|><|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x": 1}<|call|>`, ['a'], ['{"x": 1}']],
    ['mistral', `${prose}[TOOL_CALLS]a[ARGS]{"x": {"y": [1, 2]}}[TOOL_CALLS]b[ARGS]{}`, ['a', 'b'], ['{"x": {"y": [1, 2]}}', '{}']],
    ['qwen3-coder', `${prose}<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\nok`, ['a'], ['</function>']],
    ['glm', `${prose}<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value></tool_call> and more`, ['a'], ['</tool_call>']],
    ['invoke', `${prose}<minimax:tool_call>\n<invoke name="a">\n<parameter name="x">1</parameter>\n</invoke>\n<invoke name="b">\n</invoke>\n</minimax:tool_call>`, ['a', 'b'], ['</invoke>', '</invoke>']],
    ['kimi-k2', `${prose}<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": 1}<|tool_call_end|><|tool_calls_section_end|>`, ['a'], ['<|tool_call_end|>']],
    ['deepseek', `${prose}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{"x": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`, ['a'], ['<｜tool▁call▁end｜>']],
    ['pythonic', `${prose}\`\`\`tool_code\na(x=1)\n\`\`\`\nand\n<|python_tag|>b.call(q="z")<|eom_id|>`, ['a', 'b'], ['a(x=1)', ['b.call(q="z")', '<|eom_id|>']]],
    ['functionary-v3.2', `>>>all\n${prose}>>>a\n{"x": 1}>>>b\n{}`, ['a', 'b'], ['{"x": 1}', '{}']],
    ['json', `${prose}Calling {"name": "a", "arguments": {"x": 1}} now, and \`\`\`json\n{"name": "b"}\n\`\`\``, ['a', 'b'], ['{"x": 1}}', '{"name": "b"}']],
  ];

  it.each(fixtures)('%s: each call is handed over by the push that completes it, once', (_format, text, names, completions) => {
    for (const size of [1, 3, 7, 16]) {
      const stream = createToolCallStream();
      const emitted: { name: string; at: number }[] = [];
      for (let i = 0; i < text.length; i += size) {
        for (const c of stream.push(text.slice(i, i + size))) emitted.push({ name: c.name, at: Math.min(text.length, i + size) });
      }
      const result = stream.end();
      expect(result, `deltas of ${size}`).toEqual(parseToolCalls(text));
      expect(emitted.map((e) => e.name), `deltas of ${size}`).toEqual(names);
      let from = 0;
      const endOf = (marker: string): number => text.indexOf(marker, from) + marker.length;
      completions.forEach((completion, k) => {
        const [first, last] = typeof completion === 'string' ? [completion, completion] : completion;
        const complete = endOf(first);
        const latest = endOf(last);
        from = complete;
        // Handed over by the delta that holds the completing character (a delta that ends inside an end token waits for it).
        expect(emitted[k]!.at, `call ${k}, deltas of ${size}`).toBeGreaterThanOrEqual(complete);
        expect(emitted[k]!.at, `call ${k}, deltas of ${size}`).toBeLessThan(latest + size);
      });
    }
  });

  it('whatever the split, end() returns what parseToolCalls returns for the whole text (property)', () => {
    const texts = [...fixtures.map((f) => f[1]), 'Broken: [TOOL_CALLS]a[ARGS]{"x": } then <tool_call>{"name": "c", "arguments": {}}</tool_call>', '[get_weather(city="Paris"), get_time()]', '<think>{"name": "no", "arguments": {}}</think>{"name": "yes", "arguments": {}}'];
    fc.assert(
      fc.property(fc.constantFrom(...texts), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 200 }), (text, sizes) => {
        const stream = createToolCallStream();
        let i = 0;
        for (let k = 0; i < text.length; k++) {
          const size = sizes[k % sizes.length]!;
          stream.push(text.slice(i, i + size));
          i += size;
        }
        expect(stream.end()).toEqual(parseToolCalls(text));
      }),
      { numRuns: 300 },
    );
  });

  it('checks names against the offered tools as it goes: an unknown name is never handed over', () => {
    const stream = createToolCallStream({ tools: ['get_time'] });
    const handed = [...stream.push('<tool_call>{"name": "get_tme", "arguments": {}}</tool_call>'), ...stream.push('<tool_call>{"name": "get_time", "arguments": {}}</tool_call>')];
    expect(handed.map((c) => c.name)).toEqual(['get_time']);
    expect(stream.end().problems).toEqual([expect.objectContaining({ code: 'UNKNOWN_TOOL', name: 'get_tme', suggestions: ['get_time'] })]);
  });

  it('a push that completes no call returns an empty read-only list; one that completes a call, a list of its own', () => {
    const stream = createToolCallStream();
    const none = stream.push('Let me check. ');
    expect(none).toEqual([]);
    expect(Object.isFrozen(none)).toBe(true);
    expect(stream.push('<tool_call>{"name": "get_time", "arguments": {}}')).toEqual([]);
    const done = stream.push('</tool_call>');
    expect(done).toEqual([{ id: 'call_1', name: 'get_time', arguments: {} }]);
    expect(Object.isFrozen(done)).toBe(false);
    expect(none).toEqual([]);
  });

  it('streams formats of your own too, and refuses bad use', () => {
    const lines: ToolCallFormat = {
      name: 'lines',
      models: 'test',
      detect: (text) => text.indexOf('CALL '),
      parse: (text, context) => {
        const calls = [];
        for (const m of text.matchAll(/CALL (\w+);/g)) calls.push({ start: m.index, end: m.index + m[0].length, name: m[1]!, arguments: {} });
        const open = text.lastIndexOf('CALL ');
        return { calls, ...(context.partial && open >= 0 && !text.slice(open).includes(';') ? { pending: open } : {}) };
      },
    };
    const stream = createToolCallStream({ formats: [lines] });
    expect(stream.push('CALL a; CALL b')).toEqual([{ id: 'call_1', name: 'a', arguments: {} }]);
    expect(stream.push(';')).toEqual([{ id: 'call_2', name: 'b', arguments: {} }]);
    expect(stream.end().calls.map((c) => c.name)).toEqual(['a', 'b']);
    expect(() => stream.push('more')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => createToolCallStream().push(42 as never)).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => createToolCallStream({ formats: ['nope'] })).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});
