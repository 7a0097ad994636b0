import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../src/llm/index.js';

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
    expect(parseToolCalls(chunks)).toEqual({ calls: [{ id: 'call_1', name: 'find_city', arguments: { text: 'Where is Osaka?' } }], problems: [] });
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
