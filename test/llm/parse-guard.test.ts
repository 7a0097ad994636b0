import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { createToolCallStream, parseToolCalls, registerToolCallFormat, toolCallFormats, toOpenAITools, type ToolCallFormat } from '../../src/entry/llm.js';

// What keeps text parsing honest: a format's marker with nothing readable behind it is
// a problem naming the format and the place, never silence; with the offered tools known, other
// names are problems with the closest names; without them, definitions, JSON-RPC envelopes and
// echoed template placeholders are not calls. And the registry: formats by name, formats of your own.

describe('never silent: a marker with nothing readable is a problem naming the format and the position', () => {
  const cases: [format: string, text: string, at: number][] = [
    ['harmony', '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": <|call|>', 0],
    ['harmony', 'Now <|channel|>commentary to=functions.get_time<|message|>at noon<|call|>', 4],
    ['kimi-k2', '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_end|><|tool_calls_section_end|>', 28],
    ['deepseek', 'ok <｜tool▁call▁begin｜>get_time{"timezone": "UTC"}<｜tool▁call▁end｜>', 3],
    ['mistral', 'Sure. [TOOL_CALLS] !!', 6],
    ['mistral', '[TOOL_CALLS]get_time[ARGS]{"timezone": }', 0],
    ['qwen3-coder', '<tool_call>\n<function=get_time>\nUTC please\n</function>\n</tool_call>', 0],
    ['glm', '<tool_call>get_weather<arg_key>city</arg_key></tool_call>', 0],
    ['invoke', 'Then <invoke name="">\n</invoke>', 5],
    ['anthropic-legacy', '<function_calls><invoke><parameters><city>Paris</city></parameters></invoke></function_calls>', 0],
    ['pythonic', '[get_weather(city=Paris)]', 1],
    ['functionary-v3.1', '<function=get_time>{"timezone": }</function>', 0],
    ['functionary-v3.2', '>>>get_time\n{"timezone": }', 0],
    ['llama3-json', '<|python_tag|>{"name": "get_time", "parameters": }', 0],
    ['granite', 'x<|tool_call|>not json', 1],
    ['nemotron', '<TOOLCALL>[{"name": "get_time", "arguments": {"tz": ]</TOOLCALL>', 0],
    ['command-r', '<|START_ACTION|>call get_time<|END_ACTION|>', 0],
    ['internlm', '<|action_start|><|plugin|>get_time()<|action_end|>', 0],
    ['functools', 'functools[{"name": "get_time", "arguments": }]', 0],
    ['hermes', 'Calling. <tool_call>call get_time now</tool_call>', 9],
    ['tool-tags', 'then <tool>get_time', 5],
    ['json', 'Use {"name": "get_time", "arguments": {"timezone": }} now', 4],
  ];

  it.each(cases)('%s: %j', (format, text, at) => {
    const { calls, problems } = parseToolCalls(text);
    expect(calls).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ format, at, code: expect.stringMatching(/^(UNREADABLE_CALL|INVALID_ARGUMENTS)$/) });
    expect(problems[0]!.message).toContain(`(${format}, line 1 column ${at + 1})`);
  });

  it('reports the line and column of a problem on a later line, and keeps the calls around it', () => {
    const text = 'First:\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>\nThen:\n  [TOOL_CALLS]get_weather[ARGS]{"city": ]';
    const { calls, problems } = parseToolCalls(text);
    expect(calls.map((c) => c.name)).toEqual(['get_time']);
    expect(problems).toEqual([expect.objectContaining({ code: 'INVALID_ARGUMENTS', name: 'get_weather', format: 'mistral', at: text.indexOf('[TOOL_CALLS]') })]);
    expect(problems[0]!.message).toMatch(/\(mistral, line 4 column 3\)$/);
  });
});

describe('no false calls without tools', () => {
  it('a tool definition in a code sample is not a call (OpenAI, Llama, Anthropic and MCP shapes)', () => {
    const text = [
      'Here is how to declare it:',
      '```json',
      '{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}',
      '```',
      'or, for Llama: {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}',
      '```',
      '{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object", "properties": {}}}',
      '{"name": "get_weather", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}}',
      '```',
    ].join('\n');
    expect(parseToolCalls(text)).toEqual({ calls: [], problems: [], content: text });
  });

  it('a JSON-RPC envelope in prose (an MCP tools/call) is not a call', () => {
    const text = 'The client sends {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Paris"}}} and waits.';
    expect(parseToolCalls(text)).toEqual({ calls: [], problems: [], content: text });
  });

  it('the chat template’s own examples echoed back are neither calls nor problems', () => {
    const echoes = [
      // Hermes / Qwen2.5 instructions.
      'For each call: <tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
      // Llama 3.2 and Gemma list instructions.
      '[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]',
      // Qwen3-Coder instructions.
      '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>',
      // GLM-4.5 instructions.
      '<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n</tool_call>',
      // MiniMax-M2 instructions.
      '<minimax:tool_call>\n<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n</invoke>\n</minimax:tool_call>',
      // Ad-hoc prompts.
      'Answer like {"name": "tool_name", "arguments": {"arg1": "value1"}}.',
    ];
    for (const text of echoes) expect(parseToolCalls(text), text).toEqual({ calls: [], problems: [], content: text });
  });

  it('plain prose, Python prompts and markdown are not calls', () => {
    const prose = 'The result was {ok}. In Python:\n```\n>>> print(len([1, 2]))\n2\n```\nSee [the docs](https://example.com) and [note(1)].';
    expect(parseToolCalls(prose)).toEqual({ calls: [], problems: [], content: prose });
  });
});

describe('tool-aware parsing', () => {
  const tools = toOpenAITools({
    tools: [],
    chains: [],
  });

  it('a name that was not offered is an UNKNOWN_TOOL problem with the closest names, whatever the format', () => {
    const offered = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
      { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
    const text = '<tool_call>{"name": "get_wether", "arguments": {"city": "Paris"}}</tool_call>[TOOL_CALLS]get_time[ARGS]{}';
    const { calls, problems } = parseToolCalls(text, { tools: offered });
    expect(calls).toEqual([{ id: 'call_1', name: 'get_time', arguments: {} }]);
    expect(problems).toEqual([
      {
        code: 'UNKNOWN_TOOL',
        message: "call to 'get_wether', which is not an offered tool; did you mean 'get_weather', 'get_time'?",
        raw: '{"name":"get_wether","arguments":{"city":"Paris"}}',
        name: 'get_wether',
        format: 'hermes',
        at: 0,
        suggestions: ['get_weather', 'get_time'],
      },
    ]);
    expect(parseToolCalls('{"name": "x", "arguments": {}}', { tools }).problems[0]!.message).toMatch(/no tools were offered/);
  });

  it('applies to structured tool_calls too, keeping their id so the call can still be answered', () => {
    const message = { role: 'assistant', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'rm_rf', arguments: '{}' } }] };
    expect(parseToolCalls(message, { tools: ['get_time'] }).problems).toEqual([expect.objectContaining({ code: 'UNKNOWN_TOOL', id: 'call_9', name: 'rm_rf', format: 'openai' })]);
  });

  it('takes an engine, names, or Anthropic and MCP definitions as the offered tools', async () => {
    const engine = await createEngine();
    engine.registerTool({ name: 'shout', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, handler: () => ({}) });
    const xml = '<tool_call>\n<function=shout>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>';
    expect(parseToolCalls(xml, { tools: engine }).calls).toEqual([{ id: 'call_1', name: 'shout', arguments: { n: 3 } }]);
    expect(parseToolCalls(xml, { tools: ['shout'] }).calls[0]!.arguments).toEqual({ n: '3' });
    expect(parseToolCalls(xml, { tools: [{ name: 'shout', input_schema: { type: 'object', properties: { n: { type: 'number' } } } }] }).calls[0]!.arguments).toEqual({ n: 3 });
    expect(parseToolCalls(xml, { tools: [{ name: 'shout', inputSchema: { type: 'object', properties: { n: { type: 'string' } } } }] }).calls[0]!.arguments).toEqual({ n: '3' });
    await engine.close();
  });

  it('a placeholder-looking name is a call when a tool of that name was offered', () => {
    expect(parseToolCalls('{"name": "tool_name", "arguments": {}}', { tools: ['tool_name'] }).calls).toEqual([{ id: 'call_1', name: 'tool_name', arguments: {} }]);
  });

  it('a value that does not fit its schema stays text, for the tool’s validation to name', () => {
    const offered = [{ name: 'get_weather', parameters: { type: 'object', properties: { days: { type: 'integer' } } } }];
    const text = '<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>';
    expect(parseToolCalls(text, { tools: offered }).calls[0]!.arguments).toEqual({ days: 'three' });
  });
});

describe('the format registry', () => {
  it('lists the built-in formats in the order they run', () => {
    expect(toolCallFormats().map((f) => f.name)).toEqual([
      'harmony', 'kimi-k2', 'deepseek', 'mistral', 'qwen3-coder', 'functionary-v3.1', 'glm', 'invoke', 'anthropic-legacy', 'function-gemma', 'llama3-json',
      'pythonic', 'functionary-v3.2', 'granite', 'nemotron', 'command-r', 'internlm', 'functools', 'hermes', 'tool-tags', 'json',
    ]);
  });

  it('`formats` restricts detection to the named formats', () => {
    const text = '<tool_call>{"name": "a", "arguments": {}}</tool_call> and in prose {"name": "b", "arguments": {}}';
    expect(parseToolCalls(text).calls.map((c) => c.name)).toEqual(['a', 'b']);
    expect(parseToolCalls(text, { formats: ['hermes'] }).calls.map((c) => c.name)).toEqual(['a']);
    expect(parseToolCalls(text, { formats: [] })).toEqual({ calls: [], problems: [], content: text });
  });

  it('rejects bad options up front, naming them (USAGE), with did-you-mean', () => {
    expect(() => parseToolCalls('x', { formats: ['hermess'] })).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/no tool-call format is named 'hermess' \(did you mean 'hermes'\?\)/) }));
    expect(() => parseToolCalls('x', { tools: 'get_time' as never })).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/'tools' must be/) }));
    expect(() => parseToolCalls('x', { tools: [{ description: 'no name' }] as never })).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/'tools\[0\]'/) }));
    expect(() => parseToolCalls('x', { format: ['hermes'] } as never)).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/unknown option 'format' \(did you mean 'formats'\?\)/) }));
  });

  /** `CALL name {json}` on a line of its own: a made-up protocol, as a user would add one. */
  const callLines: ToolCallFormat = {
    name: 'call-lines',
    models: 'a prompted protocol',
    detect: (text) => text.indexOf('CALL '),
    parse: (text) => {
      const calls = [];
      const problems = [];
      for (const m of text.matchAll(/^CALL (\w+) (.*)$/gm)) {
        const span = { start: m.index, end: m.index + m[0].length };
        if (m[2]!.startsWith('{')) calls.push({ ...span, name: m[1]!, arguments: m[2]! });
        else problems.push({ ...span, message: `CALL ${m[1]} without JSON arguments`, name: m[1]! });
      }
      return { calls, problems };
    },
  };

  it('registerToolCallFormat adds a format (before the catch-all json) until its disposer removes it', () => {
    const text = 'Plan:\nCALL get_time {"timezone": "UTC"}\nCALL get_weather nothing';
    expect(parseToolCalls(text).calls).toEqual([]);
    const dispose = registerToolCallFormat(callLines);
    try {
      expect(toolCallFormats().map((f) => f.name).slice(-3)).toEqual(['tool-tags', 'call-lines', 'json']);
      const { calls, problems } = parseToolCalls(text);
      // The JSON in the line was read by call-lines, not again by the json format.
      expect(calls).toEqual([{ id: 'call_1', name: 'get_time', arguments: { timezone: 'UTC' } }]);
      expect(problems).toEqual([expect.objectContaining({ code: 'UNREADABLE_CALL', format: 'call-lines', name: 'get_weather', at: text.lastIndexOf('CALL') })]);
      expect(() => registerToolCallFormat(callLines)).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/already registered/) }));
    } finally {
      dispose();
    }
    expect(toolCallFormats().map((f) => f.name)).not.toContain('call-lines');
  });

  it('takes a format object in `formats` without registering it, and checks it', () => {
    expect(parseToolCalls('CALL get_time {}', { formats: [callLines] }).calls).toEqual([{ id: 'call_1', name: 'get_time', arguments: {} }]);
    expect(() => registerToolCallFormat({ name: 'Bad Name', models: '', detect: () => -1, parse: () => ({ calls: [] }) })).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => registerToolCallFormat({ ...callLines, name: 'x', parse: undefined } as never)).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/needs a 'parse' function/) }));
    expect(() => registerToolCallFormat({ ...callLines, name: 'y' }, { before: 'hermez' })).toThrow(expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/did you mean 'hermes'/) }));
  });

  it('a format that throws is a problem of its own; the other formats still read', () => {
    const broken: ToolCallFormat = { name: 'broken', models: 'none', detect: () => 0, parse: () => { throw new Error('oops'); } };
    const { calls, problems } = parseToolCalls('<tool_call>{"name": "a", "arguments": {}}</tool_call>', { formats: [broken, 'hermes'] });
    expect(calls.map((c) => c.name)).toEqual(['a']);
    expect(problems).toEqual([expect.objectContaining({ format: 'broken', message: expect.stringMatching(/the 'broken' format failed: oops/) })]);
  });
});

describe('hostile text stays linear', () => {
  // Floods of one format's marker with nothing to close it. A search from each marker to the end
  // of the text would make these quadratic (minutes); each format remembers what it searched.
  // No timing is asserted: a quadratic regression shows as this test running into its timeout.
  const floods: [string, string][] = [
    ['<function=', '<function=a>'.repeat(20_000)],
    ['<tool_call>', '<tool_call>'.repeat(20_000)],
    ['kimi-k2', '<|tool_call_begin|>'.repeat(20_000)],
    ['deepseek', '<｜tool▁call▁begin｜>'.repeat(20_000)],
    ['invoke', '<invoke name="a">'.repeat(20_000)],
    ['anthropic-legacy', '<invoke>'.repeat(20_000)],
    ['glm', `<tool_call>a${'<arg_key>k</arg_key>'.repeat(20_000)}`],
    ['harmony', '<|channel|>commentary to=functions.a '.repeat(10_000)],
    ['pythonic', `[${'a(x=1), '.repeat(20_000)}`],
    ['python_tag', '<|python_tag|>'.repeat(20_000)],
    ['functionary-v3.2', '>>>a\n'.repeat(20_000)],
    ['granite', '<|tool_call|>['.repeat(20_000)],
    ['mistral', '[TOOL_CALLS]'.repeat(20_000)],
  ];

  it.each(floods)('%s', (_name, text) => {
    const whole = parseToolCalls(text);
    const stream = createToolCallStream();
    for (let i = 0; i < text.length; i += 64) stream.push(text.slice(i, i + 64));
    expect(stream.end()).toEqual(whole);
    expect(whole.calls.length + whole.problems.length).toBeLessThanOrEqual(20_001);
  });
});
