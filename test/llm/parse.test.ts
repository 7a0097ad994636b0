import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../../src/llm/index.js';

// Tool calls as models write them: OpenAI messages, whole responses, Anthropic content blocks,
// and free text in the shapes seen in practice (prose around JSON, several calls, tags, fences,
// full-width punctuation, Python-ish literals, trailing commas, cut-off output).

describe('parseToolCalls: OpenAI messages', () => {
  it('reads tool_calls with arguments as JSON text, nested JSON inside argument strings intact', () => {
    const message = {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_abc123',
          type: 'function',
          function: { name: 'search_db', arguments: '{"table": "orders", "filters": "[{\\"type\\": \\"date\\", \\"range\\": \\"2024-01-01/2024-01-31\\"}]"}' },
        },
        { id: 'call_def456', type: 'function', function: { name: 'get_weather', arguments: '{"city": "北京"}' } },
      ],
    };
    const { calls, problems } = parseToolCalls(message);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_abc123', name: 'search_db', arguments: { table: 'orders', filters: '[{"type": "date", "range": "2024-01-01/2024-01-31"}]' } },
      { id: 'call_def456', name: 'get_weather', arguments: { city: '北京' } },
    ]);
    // The string argument is itself valid JSON, kept as the model sent it.
    expect(JSON.parse(calls[0]!.arguments.filters as string)).toEqual([{ type: 'date', range: '2024-01-01/2024-01-31' }]);
  });

  it('tolerates arguments given as an object, empty arguments, and double-encoded arguments', () => {
    const { calls, problems } = parseToolCalls({
      role: 'assistant',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'one', arguments: { n: 1 } } },
        { id: 'b', type: 'function', function: { name: 'two', arguments: '' } },
        { id: 'c', type: 'function', function: { name: 'three', arguments: JSON.stringify(JSON.stringify({ n: 3 })) } },
      ],
    });
    expect(problems).toEqual([]);
    expect(calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['a', 'one', { n: 1 }],
      ['b', 'two', {}],
      ['c', 'three', { n: 3 }],
    ]);
  });

  it('reports broken argument JSON as a problem that keeps the id, name and raw text; the other calls still parse', () => {
    const broken = '{"city": "Paris", "days": }';
    const { calls, problems } = parseToolCalls({
      role: 'assistant',
      tool_calls: [
        { id: 'call_1x', type: 'function', function: { name: 'forecast', arguments: broken } },
        { id: 'call_2x', type: 'function', function: { name: 'local_time', arguments: '{"timezone": "Europe/Paris"}' } },
        { id: 'call_3x', type: 'function', function: { arguments: '{}' } },
      ],
    });
    expect(calls).toEqual([{ id: 'call_2x', name: 'local_time', arguments: { timezone: 'Europe/Paris' } }]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatchObject({ id: 'call_1x', name: 'forecast', raw: broken });
    expect(problems[0]!.message).toMatch(/not valid JSON/);
    expect(problems[1]).toMatchObject({ id: 'call_3x' });
    expect(problems[1]!.message).toMatch(/no function name/);
  });

  it('arguments that are JSON but not an object are a problem', () => {
    const { calls, problems } = parseToolCalls({ role: 'assistant', tool_calls: [{ id: 'q', function: { name: 'f', arguments: '[1, 2]' } }] });
    expect(calls).toEqual([]);
    expect(problems[0]).toMatchObject({ id: 'q', name: 'f', raw: '[1, 2]' });
    expect(problems[0]!.message).toMatch(/must be a JSON object, got an array/);
  });

  it('reads a whole chat-completion response, and the legacy function_call', () => {
    const response = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [{ id: 'call_z', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
    };
    expect(parseToolCalls(response).calls).toEqual([{ id: 'call_z', name: 'f', arguments: { a: 1 } }]);
    const legacy = parseToolCalls({ role: 'assistant', content: null, function_call: { name: 'g', arguments: '{"b": 2}' } });
    expect(legacy).toEqual({ calls: [{ id: 'call_1', name: 'g', arguments: { b: 2 } }], problems: [], content: null });
  });

  it('parses the text of a message without tool_calls, but not the commentary of one with them', () => {
    const textOnly = parseToolCalls({ role: 'assistant', content: 'Let me check. {"name": "local_time", "arguments": {"timezone": "UTC"}}' });
    expect(textOnly.calls).toEqual([{ id: 'call_1', name: 'local_time', arguments: { timezone: 'UTC' } }]);
    expect(textOnly.content).toBe('Let me check.');
    const both = parseToolCalls({
      role: 'assistant',
      content: 'I would call {"name": "other", "arguments": {}} but instead:',
      tool_calls: [{ id: 'call_q', type: 'function', function: { name: 'real', arguments: '{}' } }],
    });
    expect(both.calls.map((c) => c.name)).toEqual(['real']);
    // Beside structured calls, the text is commentary, returned as it is.
    expect(both.content).toBe('I would call {"name": "other", "arguments": {}} but instead:');
    expect(parseToolCalls({ role: 'assistant', content: 'The time in Osaka is 14:05.' })).toEqual({ calls: [], problems: [], content: 'The time in Osaka is 14:05.' });
  });

  it('reads Anthropic tool_use blocks', () => {
    const message = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'toolu_01', name: 'find_city', input: { text: 'Osaka' } },
        { type: 'tool_use', id: 'toolu_02', name: 'local_time', input: { timezone: 'Asia/Tokyo' } },
      ],
    };
    expect(parseToolCalls(message).calls).toEqual([
      { id: 'toolu_01', name: 'find_city', arguments: { text: 'Osaka' } },
      { id: 'toolu_02', name: 'local_time', arguments: { timezone: 'Asia/Tokyo' } },
    ]);
  });
});

describe('parseToolCalls: free text', () => {
  it('finds several JSON calls in prose by bracket matching, braces and escaped quotes inside strings included', () => {
    const text = [
      '好的，我来帮你查询。首先查天气：',
      '{"name": "get_weather", "arguments": {"city": "杭州", "unit": "celsius"}}',
      'then run a query whose text contains braces and quotes:',
      '{"tool": "run_sql", "args": {"query": "SELECT \'}\' AS brace, \\"{x}\\" AS q FROM t WHERE a = \'{\'"}}',
      '以上就是结果 {not json at all}.',
    ].join('\n');
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: { city: '杭州', unit: 'celsius' } },
      { id: 'call_2', name: 'run_sql', arguments: { query: 'SELECT \'}\' AS brace, "{x}" AS q FROM t WHERE a = \'{\'' } },
    ]);
  });

  it('accepts the name/argument key variants and OpenAI- or Anthropic-shaped objects pasted as text', () => {
    const text = `
      {"tool_name": "a", "parameters": {"x": 1}}
      {"function": "b", "input": {"y": 2}}
      {"type": "function", "id": "call_given", "function": {"name": "c", "arguments": "{\\"z\\": 3}"}}
      {"type": "tool_use", "id": "toolu_9", "name": "d", "input": {}}
      {"tool_calls": [{"name": "e", "arguments": {}}, {"name": "f", "args": {"k": "v"}}]}`;
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_1', name: 'a', arguments: { x: 1 } },
      { id: 'call_2', name: 'b', arguments: { y: 2 } },
      { id: 'call_given', name: 'c', arguments: { z: 3 } },
      { id: 'toolu_9', name: 'd', arguments: {} },
      { id: 'call_3', name: 'e', arguments: {} },
      { id: 'call_4', name: 'f', arguments: { k: 'v' } },
    ]);
  });

  it('does not take data in prose for a call', () => {
    const text = 'The user record is {"name": "Alice", "age": 31} and the config is {"debug": true}.';
    expect(parseToolCalls(text)).toEqual({ calls: [], problems: [], content: text });
  });

  it('reads <tool>NAME</tool><args>…</args> tags, several per text, non-greedily', () => {
    const text =
      '我需要计算。<tool>calculator</tool><args>{"expr": "3**5"}</args>\n' +
      '再查一下：<tool> search </tool>\n<args>\n{"query": "杭州 天气 </tool> 标签"}\n</args> 以及 ' +
      '<tool>now</tool> 结束';
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_1', name: 'calculator', arguments: { expr: '3**5' } },
      { id: 'call_2', name: 'search', arguments: { query: '杭州 天气 </tool> 标签' } },
      { id: 'call_3', name: 'now', arguments: {} },
    ]);
  });

  it('reports a <tool> tag whose <args> is not JSON, with its raw text and name', () => {
    const { calls, problems } = parseToolCalls('<tool>calculator</tool><args>{expr: 3 ** }</args> <tool>ok</tool><args>{}</args>');
    expect(calls).toEqual([{ id: 'call_1', name: 'ok', arguments: {} }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ name: 'calculator', raw: '{expr: 3 ** }' });
  });

  it('reads <tool_call>{json}</tool_call> blocks (Hermes / Qwen)', () => {
    const text =
      '<tool_call>\n{"name": "find_city", "arguments": {"text": "Osaka"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_time"}\n</tool_call>';
    expect(parseToolCalls(text).calls).toEqual([
      { id: 'call_1', name: 'find_city', arguments: { text: 'Osaka' } },
      { id: 'call_2', name: 'get_time', arguments: {} },
    ]);
  });

  it('reads fenced ```json blocks, including an array of calls and a call without arguments', () => {
    const text = [
      'Here is the call:',
      '```json',
      '{',
      '  "name": "local_time",',
      '  "arguments": { "timezone": "Asia/Tokyo", "hour12": true }',
      '}',
      '```',
      'and two more:',
      '```',
      '[{"name": "a", "arguments": {}}, {"name": "b"}]',
      '```',
    ].join('\n');
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_1', name: 'local_time', arguments: { timezone: 'Asia/Tokyo', hour12: true } },
      { id: 'call_2', name: 'a', arguments: {} },
      { id: 'call_3', name: 'b', arguments: {} },
    ]);
  });

  it('repairs full-width punctuation outside strings without touching CJK text inside them', () => {
    const text = '调用：｛“name”：“get_weather”，“arguments”：｛“city”：“北京，朝阳区”，“note”：“他说：‘好’”｝｝';
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: { city: '北京，朝阳区', note: '他说：‘好’' } }]);
  });

  it('keeps full-width punctuation and curly quotes that are inside valid JSON strings', () => {
    const text = '{"name": "say", "arguments": {"text": "他说：“你好，世界”｛不是括号｝"}, "extra": 1,}';
    const { calls } = parseToolCalls(text);
    expect(calls).toEqual([{ id: 'call_1', name: 'say', arguments: { text: '他说：“你好，世界”｛不是括号｝' } }]);
  });

  it('reads mixed ASCII and curly quotes, keeping curly quotes that are part of a value', () => {
    const text = '{"name”: "get_weather", "arguments": {"city": "北京"}} 和 {“name": "say", "arguments": {"text": "他说“你好”"}}';
    expect(parseToolCalls(text)).toEqual({
      calls: [
        { id: 'call_1', name: 'get_weather', arguments: { city: '北京' } },
        { id: 'call_2', name: 'say', arguments: { text: '他说“你好”' } },
      ],
      problems: [],
      content: '和',
    });
    const message = { role: 'assistant', tool_calls: [{ id: 'q', function: { name: 'f', arguments: '{"city”: "北京"}' } }] };
    expect(parseToolCalls(message).calls).toEqual([{ id: 'q', name: 'f', arguments: { city: '北京' } }]);
  });

  it('tolerates trailing commas, single quotes, unquoted keys, Python literals, comments and raw newlines', () => {
    const text = `{
      'name': 'configure',
      arguments: {
        enabled: True, // turn it on
        limit: None,
        path: 'C:\\Users\\me\\it\\'s here',
        pattern: "\\d+",
        notes: "line one
line two",
        tags: ["a", "b",],
      },
    }`;
    const { calls, problems } = parseToolCalls(text);
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      {
        id: 'call_1',
        name: 'configure',
        arguments: { enabled: true, limit: null, path: "C:\\Users\\me\\it's here", pattern: '\\d+', notes: 'line one\nline two', tags: ['a', 'b'] },
      },
    ]);
  });

  it('reports broken JSON that looks like a call as a problem with its raw text, never throwing', () => {
    const raw = '{"name": "get_weather", "arguments": {"city": "北京" "unit": celsius}}';
    const { calls, problems } = parseToolCalls(`Sure! ${raw} Done.`);
    expect(calls).toEqual([]);
    expect(problems).toEqual([
      { code: 'UNREADABLE_CALL', message: expect.stringMatching(/^invalid JSON: .* \(json, line 1 column 7\)$/), raw, name: 'get_weather', format: 'json', at: 6 },
    ]);
  });

  it('reports output cut off mid-call, but still finds the complete call before it', () => {
    const text = '{"name": "a", "arguments": {"x": 1}} and then {"name": "b", "arguments": {"text": "unfinish';
    const { calls, problems } = parseToolCalls(text);
    expect(calls).toEqual([{ id: 'call_1', name: 'a', arguments: { x: 1 } }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ name: 'b', raw: '{"name": "b", "arguments": {"text": "unfinish' });
    expect(problems[0]!.message).toMatch(/unterminated/);
  });

  it('finds a complete call inside a broken wrapper', () => {
    const text = '{"thought": "need the time", oops, "action": {"name": "local_time", "arguments": {"timezone": "UTC"}}}';
    // The call is taken out of the wrapper it was found in; the rest of the wrapper stays.
    expect(parseToolCalls(text)).toEqual({ calls: [{ id: 'call_1', name: 'local_time', arguments: { timezone: 'UTC' } }], problems: [], content: '{"thought": "need the time", oops, "action": }' });
  });

  it('skips drafts inside <think>…</think>', () => {
    const text = '<think>maybe {"name": "wrong", "arguments": {}}?</think>{"name": "right", "arguments": {}}';
    expect(parseToolCalls(text).calls.map((c) => c.name)).toEqual(['right']);
  });

  it('numbers calls without ids around the ids the model gave', () => {
    const text = '{"id": "call_1", "name": "a", "arguments": {}} {"name": "b", "arguments": {}} {"name": "c", "arguments": {}}';
    expect(parseToolCalls(text).calls.map((c) => c.id)).toEqual(['call_1', 'call_2', 'call_3']);
    const given = '{"name": "b", "arguments": {}} {"id": "call_1", "name": "a", "arguments": {}}';
    expect(parseToolCalls(given).calls.map((c) => c.id)).toEqual(['call_2', 'call_1']);
  });
});

describe('parseToolCalls: hostile and odd input', () => {
  it('turns inputs it cannot read into problems', () => {
    for (const input of [null, undefined, 42, true, { foo: 'bar' }]) {
      const result = parseToolCalls(input);
      expect(result.calls).toEqual([]);
      expect(result.problems).toHaveLength(1);
      expect(typeof result.problems[0]!.raw).toBe('string');
    }
  });

  it('survives a throwing getter', () => {
    const evil = {
      role: 'assistant',
      get tool_calls(): unknown {
        throw new Error('boom');
      },
    };
    const result = parseToolCalls(evil);
    expect(result.calls).toEqual([]);
    expect(result.problems[0]!.message).toMatch(/boom/);
  });

  // A quadratic read of these inputs would run for minutes: the unit project's timeout is the bound.
  it('stays fast on pathological brace soup', () => {
    const soup = '{"name": '.repeat(20_000);
    const result = parseToolCalls(soup);
    expect(result.calls).toEqual([]);
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.problems[0]!.raw.length).toBeLessThanOrEqual(4001);
  });

  it('stays linear on a flood of unclosed braces, and still reads a tag after them', () => {
    const flood = `${'{ '.repeat(200_000)}<tool>after</tool><args>{"ok": true}</args>`;
    const result = parseToolCalls(flood);
    expect(result).toEqual({ calls: [{ id: 'call_1', name: 'after', arguments: { ok: true } }], problems: [], content: '{ '.repeat(200_000).trimEnd() });
    const tags = parseToolCalls('<tool>'.repeat(50_000));
    expect(tags.calls).toEqual([]);
    expect(tags.problems[0]).toMatchObject({ code: 'UNREADABLE_CALL', message: 'unterminated <tool> tag (tool-tags, line 1 column 1)', format: 'tool-tags', at: 0 });
  });

  it('never evaluates anything', () => {
    const text = '{"name": "x", "arguments": {"a": (function(){ globalThis.__pwned = 1; return 1; })()}}';
    const result = parseToolCalls(text);
    expect((globalThis as { __pwned?: number }).__pwned).toBeUndefined();
    expect(result.calls).toEqual([]);
    expect(result.problems).toHaveLength(1);
  });
});
