import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, type OpenAITool } from '../../src/entry/llm.js';

// Every native tool-call format parseToolCalls reads, each with the text its model
// writes as the chat template or the serving stack's parser documents it (source in a comment).
// A call must come out exactly: name, arguments, and the model's own id where the format has one.

const call = (name: string, args: Record<string, unknown>, id?: string) => ({ id: id ?? expect.stringMatching(/^call_\d+$/), name, arguments: args });

/** The tools offered in the typed cases, as toOpenAITools would export them. */
const TOOLS: OpenAITool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          days: { type: 'integer' },
          detailed: { type: 'boolean' },
          units: { type: ['string', 'null'], enum: ['c', 'f', null] },
          options: { type: 'object' },
          hours: { type: 'array', items: { type: 'integer' } },
          zip: { type: 'string' },
        },
      },
    },
  },
  { type: 'function', function: { name: 'get_time', description: 'Local time.', parameters: { type: 'object', properties: { timezone: { type: 'string' } } } } },
];

describe('gpt-oss Harmony', () => {
  // Source: OpenAI, "OpenAI Harmony Response Format" (cookbook.openai.com/articles/openai-harmony), function-calling example.
  const documented =
    '<|channel|>analysis<|message|>Need to use function get_current_weather.<|end|>' +
    '<|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>';

  it('reads the recipient as the name and the body as JSON arguments, ignoring the analysis channel', () => {
    // The analysis channel is reasoning and the headers are layout: nothing is left for the content.
    expect(parseToolCalls(documented)).toEqual({ calls: [call('get_current_weather', { location: 'San Francisco' })], problems: [], content: null });
  });

  it('reads the recipient in the role header, several calls, and output whose special tokens were stripped', () => {
    const roleHeader = '<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{"timezone": "Asia/Tokyo"}<|call|>';
    expect(parseToolCalls(roleHeader).calls).toEqual([call('get_time', { timezone: 'Asia/Tokyo' })]);
    const stripped = 'analysisNeed the weather.assistantcommentary to=functions.get_weather json{"city":"Tokyo"}';
    expect(parseToolCalls(stripped).calls).toEqual([call('get_weather', { city: 'Tokyo' })]);
  });

  it('never reads a call drafted in the analysis channel, nor a tool result addressed to the assistant', () => {
    const text =
      '<|channel|>analysis<|message|>Maybe {"name": "wrong", "arguments": {}} or <tool_call>{"name": "wrong"}</tool_call>.<|end|>' +
      '<|start|>functions.get_time to=assistant<|channel|>commentary<|message|>{"time": "09:00"}<|end|>' +
      '<|start|>assistant<|channel|>final<|message|>It is 09:00.<|return|>';
    expect(parseToolCalls(text)).toEqual({ calls: [], problems: [], content: 'It is 09:00.' });
  });
});

describe('Kimi-K2', () => {
  // Source: moonshotai/Kimi-K2-Instruct chat_template.jinja; vLLM kimi_k2_tool_parser.py (docstring example).
  it('reads each call of the section, keeping the functions.NAME:INDEX id', () => {
    const text =
      'I will check both.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|>' +
      '<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{"timezone": "Asia/Shanghai"}<|tool_call_end|><|tool_calls_section_end|>';
    expect(parseToolCalls(text)).toEqual({
      calls: [call('get_weather', { city: 'Beijing' }, 'functions.get_weather:0'), call('get_time', { timezone: 'Asia/Shanghai' }, 'functions.get_time:1')],
      problems: [],
      content: 'I will check both.',
    });
  });
});

describe('Kimi-K2 ids', () => {
  it('an id without its :INDEX is no call (as vLLM and SGLang read it) but a problem naming the tool; the calls beside it stay', () => {
    // Source: vLLM tests/tool_use/test_kimi_k2_tool_parser.py (test_extract_tool_calls_invalid_funcall).
    const text =
      "I'll help you check the weather. <|tool_calls_section_begin|> <|tool_call_begin|>\nfunctions.invalid_get_weather.0 <|tool_call_argument_begin|> {\"city\": \"Beijing\"} <|tool_call_end|> <|tool_call_begin|>\n" +
      'functions.valid_get_weather:1 <|tool_call_argument_begin|> {"city": "Shanghai"} <|tool_call_end|> <|tool_calls_section_end|>';
    const { calls, problems } = parseToolCalls(text);
    expect(calls).toEqual([call('valid_get_weather', { city: 'Shanghai' }, 'functions.valid_get_weather:1')]);
    expect(problems).toEqual([expect.objectContaining({ code: 'UNREADABLE_CALL', name: 'invalid_get_weather', format: 'kimi-k2', message: expect.stringContaining("id 'functions.invalid_get_weather.0' has no ':INDEX'") })]);
  });
});

describe('DeepSeek', () => {
  it('V3 and R1: function<｜tool▁sep｜>NAME and a fenced JSON block; R1 reasoning is skipped', () => {
    // Source: vLLM deepseekv3_tool_parser.py docstring; deepseek-ai/DeepSeek-V3 tokenizer_config.json chat template.
    const text =
      '<think>The user wants two cities. {"name": "draft", "arguments": {}}</think>' +
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather\n```json\n{"location": "Beijing"}\n```<｜tool▁call▁end｜>\n' +
      '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather\n```json\n{"location": "Shanghai"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>';
    // The reasoning stays in the content (a reasoning parser's job, as in vLLM), and so does the end-of-sentence token.
    expect(parseToolCalls(text)).toEqual({
      calls: [call('get_current_weather', { location: 'Beijing' }), call('get_current_weather', { location: 'Shanghai' })],
      problems: [],
      content: '<think>The user wants two cities. {"name": "draft", "arguments": {}}</think><｜end▁of▁sentence｜>',
    });
  });

  it('R1 distills opening a call with <｜tool▁calls｜> alone, as llama.cpp reads them', () => {
    // Source: llama.cpp tests/test-chat.cpp (COMMON_CHAT_FORMAT_DEEPSEEK_R1).
    const text = '<｜tool▁calls｜>function<｜tool▁sep｜>special_function\n```json\n{"arg1": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    expect(parseToolCalls(text)).toEqual({ calls: [call('special_function', { arg1: 1 })], problems: [], content: null });
  });

  it('V3.1: NAME<｜tool▁sep｜>{json}', () => {
    // Source: deepseek-ai/DeepSeek-V3.1 tokenizer_config.json chat template; vLLM deepseekv31_tool_parser.py.
    const text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'Paris' })]);
  });
});

describe('Mistral', () => {
  it('v11+ (Small 3.2, Magistral, Devstral): [TOOL_CALLS]NAME[ARGS]{…}, several in a row', () => {
    // Source: vLLM tests/tool_use/test_mistral_tool_parser.py (multiple_tool_calls_args); mistral-common v11 tokenizer.
    const text = '[TOOL_CALLS]add[ARGS]{"a": 3.5, "b": 4}[TOOL_CALLS]multiply[ARGS]{"a": 3, "b": 6}';
    expect(parseToolCalls(text)).toEqual({ calls: [call('add', { a: 3.5, b: 4 }), call('multiply', { a: 3, b: 6 })], problems: [], content: null });
  });

  it('v13 [CALL_ID], and a call without [ARGS]', () => {
    expect(parseToolCalls('[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{"timezone": "UTC"}').calls).toEqual([call('get_time', { timezone: 'UTC' }, 'a1b2c3d4e')]);
    expect(parseToolCalls('[TOOL_CALLS]add{"a": 1}').calls).toEqual([call('add', { a: 1 })]);
  });

  it('up to v7: a list one `}` short is read as the closing `]` says (vLLM recovers it with its partial-JSON repair), whole or streamed', () => {
    const text = '[TOOL_CALLS][{"name": "add", "arguments": {"a": 1}]';
    expect(parseToolCalls(text)).toEqual({ calls: [call('add', { a: 1 })], problems: [], content: null });
    const stream = createToolCallStream();
    expect([...stream.push(text.slice(0, -1)), ...stream.push(']')].map((c) => c.name)).toEqual(['add']);
    expect(stream.end().calls.map((c) => c.name)).toEqual(['add']);
    // Two calls, each one short of the closing `}` of its arguments: the `}` it has closes them.
    expect(parseToolCalls('[TOOL_CALLS] [{"name": "a", "arguments": {"x": [1, 2}}, {"name": "b", "arguments": {}}]').calls).toEqual([call('a', { x: [1, 2] }), call('b', {})]);
  });

  it('up to v7: [TOOL_CALLS] and a JSON list with ids (kept)', () => {
    // Source: mistralai/Mistral-7B-Instruct-v0.3 tokenizer (mistral-common v3); vLLM mistral_tool_parser.py.
    const text = '[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"location": "Paris, France", "format": "celsius"}, "id": "a1b2c3d4e"}]';
    expect(parseToolCalls(text).calls).toEqual([call('get_current_weather', { location: 'Paris, France', format: 'celsius' }, 'a1b2c3d4e')]);
  });
});

describe('XML argument families', () => {
  const qwen3Coder =
    '<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n<parameter=days>\n3\n</parameter>\n' +
    '<parameter=detailed>\ntrue\n</parameter>\n<parameter=units>\nnull\n</parameter>\n<parameter=options>\n{"lang": "fr", "nested": [1, 2]}\n</parameter>\n' +
    '<parameter=hours>\n[6, 12]\n</parameter>\n<parameter=zip>\n02134\n</parameter>\n</function>\n</tool_call>';

  it('Qwen3-Coder: values stay text without tools, and are typed by the offered schema with them', () => {
    // Source: Qwen/Qwen3-Coder-30B-A3B-Instruct chat_template.jinja (tool-call instructions); vLLM qwen3coder_tool_parser.py.
    expect(parseToolCalls(qwen3Coder).calls).toEqual([
      call('get_weather', { city: 'San Francisco', days: '3', detailed: 'true', units: 'null', options: '{"lang": "fr", "nested": [1, 2]}', hours: '[6, 12]', zip: '02134' }),
    ]);
    expect(parseToolCalls(qwen3Coder, { tools: TOOLS }).calls).toEqual([
      call('get_weather', { city: 'San Francisco', days: 3, detailed: true, units: null, options: { lang: 'fr', nested: [1, 2] }, hours: [6, 12], zip: '02134' }),
    ]);
  });

  it('Qwen3-Coder: spaces and newlines around a value are not part of it (vLLM, SGLang and llama.cpp strip them); inside, they are', () => {
    // Source: llama.cpp tests/test-chat.cpp (Qwen3-Coder XML: indented parameters, multiline content).
    const text = '<tool_call>\n  <function=code_function>\n    <parameter=a>\n    x\n    </parameter>\n    <parameter=code>\ndef hello():\n    return True\n    </parameter>\n  </function>\n</tool_call>';
    expect(parseToolCalls(text).calls).toEqual([call('code_function', { a: 'x', code: 'def hello():\n    return True' })]);
  });

  it('typed by the type names tool definitions carry besides JSON Schema\'s (float, int, bool, dict, list…), whatever their case', () => {
    // Source: vLLM tests/tool_use/test_qwen3coder_tool_parser.py (test_extract_tool_calls_type_conversion: "float_param": {"type": "float"}).
    const tools = [
      {
        name: 'test_types',
        parameters: {
          type: 'object',
          properties: { f: { type: 'float' }, i: { type: 'int' }, b: { type: 'bool' }, d: { type: 'dict' }, l: { type: 'list' }, u: { type: 'Int64' }, s: { type: 'str' }, n: { type: 'number' } },
        },
      },
    ];
    const param = (k: string, v: string) => `<parameter=${k}>\n${v}\n</parameter>\n`;
    const text = `<tool_call>\n<function=test_types>\n${param('f', '3.14')}${param('i', '42')}${param('b', 'True')}${param('d', '{"key": "value"}')}${param('l', '[1, 2]')}${param('u', '-7')}${param('s', '42')}${param('n', '1e3')}</function>\n</tool_call>`;
    expect(parseToolCalls(text, { tools }).calls).toEqual([call('test_types', { f: 3.14, i: 42, b: true, d: { key: 'value' }, l: [1, 2], u: -7, s: '42', n: 1000 })]);
  });

  it('Qwen3-Coder: a value over several lines keeps its inner newlines; a missing </parameter> ends at the next tag', () => {
    const text = '<function=get_weather>\n<parameter=city>\nSan\nFrancisco\n</parameter>\n<parameter=days>\n2\n</function>';
    expect(parseToolCalls(text, { tools: TOOLS }).calls).toEqual([call('get_weather', { city: 'San\nFrancisco', days: 2 })]);
  });

  it('GLM-4.6 writing its newlines out as `\\n`, and JSON values escaped once more, are read as the servers read them', () => {
    // Source: SGLang test/registered/function_call/test_function_call_parser.py (TestGlm4MoeDetector.test_array_argument_with_escaped_json, raw GLM-4.6 output).
    const tools = [{ name: 'todo_write', parameters: { type: 'object', properties: { todos: { type: 'array' } } } }];
    const text = String.raw`<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{\"id\": \"1\", \"task\": \"Check file at C:\\\\Users\\\\test.txt\", \"status\": \"pending\"}]</arg_value>\n</tool_call>`;
    expect(parseToolCalls(text, { tools })).toEqual({ calls: [call('todo_write', { todos: [{ id: '1', task: 'Check file at C:\\Users\\test.txt', status: 'pending' }] })], problems: [], content: null });
  });

  it('GLM: a <tool_call> cut off before its </tool_call> is no call (vLLM and SGLang leave the text as content), but a problem', () => {
    // Source: vLLM tests/tool_use/test_glm4_moe_tool_parser.py (test_extract_tool_calls_incomplete_tool_call).
    const text = '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>';
    const result = parseToolCalls(text);
    expect(result.calls).toEqual([]);
    expect(result.problems).toEqual([expect.objectContaining({ code: 'UNREADABLE_CALL', name: 'get_weather', format: 'glm' })]);
    expect(result.content).toBe(text);
  });

  it('GLM-4.5 (with newlines) and GLM-4.7 (without), typed by schema; a call without arguments', () => {
    // Source: zai-org/GLM-4.5 chat_template.jinja; vLLM glm4_moe_tool_parser.py.
    const glm45 = '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>';
    const glm47 = '<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value><arg_key>hours</arg_key><arg_value>[6, 18]</arg_value></tool_call><tool_call>get_time</tool_call>';
    expect(parseToolCalls(glm45, { tools: TOOLS }).calls).toEqual([call('get_weather', { city: 'Beijing', days: 2 })]);
    expect(parseToolCalls(glm47, { tools: TOOLS }).calls).toEqual([call('get_weather', { city: 'Beijing', hours: [6, 18] }), call('get_time', {})]);
  });

  it('MiniMax-M2 <invoke name> inside <minimax:tool_call>, typed by schema', () => {
    // Source: MiniMaxAI/MiniMax-M2 chat_template.jinja; vLLM minimax_m2_tool_parser.py.
    const text =
      '<think>Two lookups.</think>\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n' +
      '<invoke name="get_time">\n<parameter name="timezone">Europe/Paris</parameter>\n</invoke>\n</minimax:tool_call>';
    expect(parseToolCalls(text, { tools: TOOLS })).toEqual({ calls: [call('get_weather', { city: 'Paris', days: 3 }), call('get_time', { timezone: 'Europe/Paris' })], problems: [], content: '<think>Two lookups.</think>' });
  });

  it('DSML: an invoke with a JSON object inside and no parameter tags takes the object as its arguments', () => {
    // Source: SGLang test/registered/function_call/test_function_call_parser.py (TestDeepSeekV32Detector.test_detect_and_parse_json_format).
    const text =
      "I'll help you.\n\n        <｜DSML｜function_calls>\n            <｜DSML｜invoke name=\"get_favorite_tourist_spot\">\n            {\n                \"city\": \"San Francisco\"\n            }\n        </｜DSML｜invoke>\n" +
      '            <｜DSML｜invoke name="search">\n            {"query": "WebNav benchmark", "topn": 10}\n        </｜DSML｜invoke>\n        </｜DSML｜function_calls>\n        ';
    expect(parseToolCalls(text)).toEqual({
      calls: [call('get_favorite_tourist_spot', { city: 'San Francisco' }), call('search', { query: 'WebNav benchmark', topn: 10 })],
      problems: [],
      content: "I'll help you.",
    });
  });

  it('Claude-style <function_calls><invoke name>, with or without a namespace prefix on the tags', () => {
    const plain = '<function_calls>\n<invoke name="get_time">\n<parameter name="timezone">UTC</parameter>\n</invoke>\n</function_calls>';
    const prefixed = plain.replace(/<(\/?)(function_calls|invoke|parameter)/g, '<$1ns:$2');
    expect(parseToolCalls(plain).calls).toEqual([call('get_time', { timezone: 'UTC' })]);
    expect(parseToolCalls(prefixed).calls).toEqual([call('get_time', { timezone: 'UTC' })]);
  });

  it('DeepSeek V3.2 DSML: the invoke tags with a ｜DSML｜ prefix, string="false" marking JSON', () => {
    // Source: deepseek-ai/DeepSeek-V3.2 encoding_dsv32.py; vLLM deepseekv32_tool_parser.py.
    const text =
      '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Hangzhou</｜DSML｜parameter>\n' +
      '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'Hangzhou', days: 3 })]);
  });

  it('Anthropic legacy <function_calls><invoke><tool_name>, typed by schema', () => {
    // Source: Anthropic legacy prompt-based tool use (Claude 2.1 function_calls format).
    const text =
      'Let me check.\n<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<city>Paris</city>\n<days>3</days>\n</parameters>\n</invoke>\n</function_calls>';
    expect(parseToolCalls(text, { tools: TOOLS }).calls).toEqual([call('get_weather', { city: 'Paris', days: 3 })]);
  });
});

describe('pythonic calls (a literal grammar, never evaluated)', () => {
  it('Llama 3.2 / 4: a list of calls, with every literal kind', () => {
    // Source: meta-llama/Llama-3.2-3B-Instruct chat template ("[func_name1(params_name1=params_value1, …)]"); vLLM pythonic_tool_parser.py.
    const text = `[get_weather(city="San Francisco", days=3, detailed=True, units=None, options={'lang': 'fr', "n": -1.5e2}, hours=[6, 0x0c]), get_time(timezone='Asia/Tokyo')]`;
    expect(parseToolCalls(text)).toEqual({
      calls: [call('get_weather', { city: 'San Francisco', days: 3, detailed: true, units: null, options: { lang: 'fr', n: -150 }, hours: [6, 12] }), call('get_time', { timezone: 'Asia/Tokyo' })],
      problems: [],
      content: null,
    });
  });

  it('Llama 4 <|python_start|> … <|python_end|>', () => {
    // Source: vLLM llama4_pythonic_tool_parser.py; meta-llama/Llama-4-Scout-17B-16E-Instruct chat template.
    expect(parseToolCalls('<|python_start|>[get_time(timezone="UTC")]<|python_end|>').calls).toEqual([call('get_time', { timezone: 'UTC' })]);
  });

  it('Gemma ```tool_code blocks: print(…) and default_api. are layout', () => {
    // Source: Google, "Function calling with Gemma" (ai.google.dev/gemma/docs/capabilities/function-calling).
    const text = 'I will look it up.\n```tool_code\nprint(default_api.get_weather(city="London"))\nget_time(timezone="Europe/London")\n```';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'London' }), call('get_time', { timezone: 'Europe/London' })]);
  });

  it('Llama 3.1 built-in tools after <|python_tag|>: brave_search.call(…) is brave_search', () => {
    // Source: Meta, "Llama 3.1 model card and prompt formats" (built-in tool calling).
    const text = '<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")<|eom_id|>';
    expect(parseToolCalls(text).calls).toEqual([call('brave_search', { query: 'current weather in Menlo Park, California' })]);
  });

  it('strings with escapes, triple quotes, adjacent parts and raw prefixes', () => {
    const text = `[note(text='it\\'s "quoted"\\n', more="""two
lines""", joined="a" 'b', path=r'C:\\new')]`;
    expect(parseToolCalls(text).calls).toEqual([call('note', { text: 'it\'s "quoted"\n', more: 'two\nlines', joined: 'ab', path: 'C:\\new' })]);
  });

  it('never evaluates: an expression where a literal belongs is a problem, and nothing runs', () => {
    const text = `[run(cmd=__import__('os').system('touch /tmp/pwned'))]`;
    const { calls, problems } = parseToolCalls(text);
    expect(calls).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ code: 'UNREADABLE_CALL', name: 'run', format: 'pythonic', at: 1 })]);
    expect(problems[0]!.message).toMatch(/expected a literal value, found the name '__import__'/);
    expect(parseToolCalls(`[f(x=f"{secret}")]`).problems[0]!.message).toMatch(/f-string is not a literal/);
  });

  it('positional arguments are a problem naming the call; a list in the middle of prose is text', () => {
    expect(parseToolCalls('[get_time("UTC")]').problems).toEqual([expect.objectContaining({ code: 'INVALID_ARGUMENTS', name: 'get_time', format: 'pythonic' })]);
    expect(parseToolCalls('See the note [note(1)] above, and [link](https://example.com).')).toEqual({ calls: [], problems: [], content: 'See the note [note(1)] above, and [link](https://example.com).' });
  });

  it('with the tools known, a list anywhere in a message is a call when every name in it is an offered tool', () => {
    // Source: SGLang test/registered/function_call/test_function_call_parser.py (TestPythonicDetector).
    const tools = ['get_weather', 'search'];
    expect(parseToolCalls("Here's a tool call: [get_weather(location='New York', unit='celsius')]", { tools })).toEqual({
      calls: [call('get_weather', { location: 'New York', unit: 'celsius' })],
      problems: [],
      content: "Here's a tool call:",
    });
    expect(parseToolCalls("[get_weather(location='Berlin')] and [search(query='restaurants')]", { tools })).toMatchObject({
      calls: [{ name: 'get_weather' }, { name: 'search' }],
      content: 'and',
    });
    // A list of other names stays text, and so does one that mixes offered and other names; without tools, today's rule.
    expect(parseToolCalls('See the note [note(1)] and [get_weather(city="Oslo"), note(2)].', { tools })).toEqual({ calls: [], problems: [], content: 'See the note [note(1)] and [get_weather(city="Oslo"), note(2)].' });
    expect(parseToolCalls("Here's a tool call: [get_weather(location='New York')]").calls).toEqual([]);
  });

  it('a list is handed over by the push that brings its `]`, whatever follows it', () => {
    const stream = createToolCallStream();
    expect(stream.push('[f(a=1)] x')).toEqual([call('f', { a: 1 })]);
    expect(stream.end()).toEqual({ calls: [call('f', { a: 1 })], problems: [], content: 'x' });
    const offered = createToolCallStream({ tools: ['get_weather'] });
    expect(offered.push('Let me check: [get_weather(city="Os')).toEqual([]);
    expect(offered.push('lo")] and then more')).toEqual([call('get_weather', { city: 'Oslo' })]);
    expect(offered.end().content).toBe('Let me check:  and then more');
  });
});

describe('Hermes 2 Pro, as models trained on it write it', () => {
  // Source: llama.cpp tests/test-chat.cpp (COMMON_CHAT_FORMAT_HERMES_2_PRO parsing cases).
  const expected = { calls: [call('special_function', { arg1: 1 })], problems: [], content: null };
  const json = '{"name": "special_function", "arguments": {"arg1": 1}}';

  it.each([
    ['<tool>', `<tool>\n  ${json}\n</tool>`],
    ['<tools>', `<tools>\n  ${json}\n</tools>`],
    ['<response>', `<response>\n  ${json}\n</response>`],
    ['<json>', `<json>\n  ${json}\n</json>`],
    ['<JSON>', `<JSON>\n  ${json}\n</JSON>`],
    ['<xml>', `<xml>\n  {\n    "name": "special_function", "arguments": {"arg1": 1}\n  }\n</xml>`],
    ['```xml around <response>', `\`\`\`xml\n<response>\n    ${json}\n</response>\n\`\`\``],
    ['<function_call> in a fence', `\`\`\`json\n\n                    <function_call> ${json} \n                    </function_call> \n\`\`\` `],
    ['<function name="…">', '<function name="special_function">\n{"arg1": 1}\n</function>'],
  ])('a call wrapped in %s, and nothing left for the content', (_wrapper, text) => {
    expect(parseToolCalls(text)).toEqual(expected);
  });

  it('data in those tags is no call and no problem; what <tool_call> holds is meant as a call', () => {
    expect(parseToolCalls('<json>{"name": "Alice", "age": 31}</json>')).toEqual({ calls: [], problems: [], content: '<json>{"name": "Alice", "age": 31}</json>' });
    expect(parseToolCalls('<response>All good.</response>')).toEqual({ calls: [], problems: [], content: '<response>All good.</response>' });
    expect(parseToolCalls('<tool_call>{"name": "a"}</tool_call>').calls).toEqual([call('a', {})]);
  });
});

describe('FunctionGemma', () => {
  // Source: vLLM tests/tool_parsers/test_functiongemma_tool_parser.py; Google FunctionGemma model card (prompt format).
  it('reads call:NAME{…} between its tokens: <escape>d strings, bare numbers, booleans, objects and lists', () => {
    const text =
      'Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>San Francisco<escape>,unit:<escape>celsius<escape>}<end_function_call>' +
      '<start_function_call>call:plan{n:3,ok:true,none:null,opts:{lang:<escape>fr<escape>,hours:[6, 18]}}<end_function_call>';
    expect(parseToolCalls(text)).toEqual({
      calls: [call('get_weather', { location: 'San Francisco', unit: 'celsius' }), call('plan', { n: 3, ok: true, none: null, opts: { lang: 'fr', hours: [6, 18] } })],
      problems: [],
      content: 'Let me check the weather for you.',
    });
  });

  it('an escaped value is text unless the schema says otherwise; a call cut off before its end token ends with the text', () => {
    const tools = [{ name: 'count', parameters: { type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string' } } } }];
    const text = '<start_function_call>call:count{n:<escape>42<escape>,label:<escape>42<escape>}<end_function_call>';
    expect(parseToolCalls(text).calls).toEqual([call('count', { n: '42', label: '42' })]);
    expect(parseToolCalls(text, { tools }).calls).toEqual([call('count', { n: 42, label: '42' })]);
    expect(parseToolCalls('<start_function_call>call:count{n:1}').calls).toEqual([call('count', { n: 1 })]);
  });

  it('a marker with no call:NAME{…} after it, or an <escape> never closed, is a problem naming the format', () => {
    expect(parseToolCalls('<start_function_call>get_weather<end_function_call>').problems).toEqual([expect.objectContaining({ code: 'UNREADABLE_CALL', format: 'function-gemma' })]);
    expect(parseToolCalls('<start_function_call>call:a{x:<escape>open}<end_function_call>').problems).toEqual([expect.objectContaining({ code: 'INVALID_ARGUMENTS', name: 'a', format: 'function-gemma' })]);
  });

  it('streamed, a call is handed over by the push that brings its end token', () => {
    const stream = createToolCallStream();
    expect(stream.push('<start_function_call>call:a{x:<escape>1<escape>}')).toEqual([]);
    expect(stream.push('<end_function_call> done')).toEqual([call('a', { x: '1' })]);
    expect(stream.end().content).toBe('done');
  });
});

describe('Functionary', () => {
  it('v3.1: <function=NAME>{json}</function>', () => {
    // Source: meetkai/functionary-small-v3.1 chat template; Meta Llama 3.1 prompt format (custom tools).
    const text = '<function=get_weather>{"city": "San Francisco, CA"}</function><function=get_time>{"timezone": "America/Los_Angeles"}</function>';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'San Francisco, CA' }), call('get_time', { timezone: 'America/Los_Angeles' })]);
  });

  it('v3.2: >>>all for text, >>>NAME for calls; the first recipient may come without >>> when it is an offered tool', () => {
    // Source: meetkai/functionary-medium-v3.2 chat template; llama.cpp common/chat.cpp (FUNCTIONARY_V3_2).
    const text = '>>>all\nLet me check the weather.>>>get_weather\n{"city": "Hanoi"}>>>get_time\n{"timezone": "Asia/Ho_Chi_Minh"}';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'Hanoi' }), call('get_time', { timezone: 'Asia/Ho_Chi_Minh' })]);
    expect(parseToolCalls('get_weather\n{"city": "Hanoi"}', { tools: TOOLS }).calls).toEqual([call('get_weather', { city: 'Hanoi' })]);
    expect(parseToolCalls('Sure\n{"city": "Hanoi"}')).toEqual({ calls: [], problems: [], content: 'Sure\n{"city": "Hanoi"}' });
  });

  it('v3.2: the recipient lines are not content; the user may be the first recipient without >>>; python takes code as it is', () => {
    // Source: llama.cpp tests/test-chat.cpp (COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2 parsing cases).
    expect(parseToolCalls('all\nHello, world!\nnono\nWhat\'s up?>>>special_function\n{"arg1": 1}\n')).toEqual({
      calls: [call('special_function', { arg1: 1 })],
      problems: [],
      content: "Hello, world!\nnono\nWhat's up?",
    });
    expect(parseToolCalls("all\nHello, world!\nWhat's up?")).toEqual({ calls: [], problems: [], content: "Hello, world!\nWhat's up?" });
    expect(parseToolCalls("python\n# This is a program:\nprint('hey')", { tools: ['python'] }).calls).toEqual([call('python', { code: "# This is a program:\nprint('hey')" })]);
    expect(parseToolCalls(">>>python\nprint(1)>>>all\nDone.")).toEqual({ calls: [call('python', { code: 'print(1)' })], problems: [], content: 'Done.' });
  });
});

describe('formats that already worked keep working', () => {
  it('Hermes / Qwen2.5 / Qwen3: several <tool_call> blocks with text around them', () => {
    // Source: Qwen/Qwen2.5-7B-Instruct tokenizer_config.json chat template; vLLM hermes_tool_parser.py.
    const text = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"timezone": "CET"}}\n</tool_call>';
    expect(parseToolCalls(text).calls).toEqual([call('get_weather', { city: 'Paris' }), call('get_time', { timezone: 'CET' })]);
  });

  it('Llama 3.x JSON, bare and after <|python_tag|> (calls separated by ;)', () => {
    // Source: Meta, "Llama 3.1 model card and prompt formats" (JSON based tool calling); vLLM llama_tool_parser.py.
    expect(parseToolCalls('{"name": "get_weather", "parameters": {"city": "Paris"}}').calls).toEqual([call('get_weather', { city: 'Paris' })]);
    const tagged = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {"timezone": "CET"}}<|eom_id|>';
    expect(parseToolCalls(tagged).calls).toEqual([call('get_weather', { city: 'Paris' }), call('get_time', { timezone: 'CET' })]);
  });

  it('Granite, Nemotron, Command R7B, InternLM, Phi-4-mini and xLAM', () => {
    // Sources: ibm-granite/granite-3.1-8b-instruct; nvidia/Llama-3.3-Nemotron-Super-49B-v1; CohereForAI/c4ai-command-r7b-12-2024;
    // internlm/internlm2_5-7b-chat; microsoft/Phi-4-mini-instruct (chat templates); Salesforce/xLAM-2 model card.
    const expected = [call('get_time', { timezone: 'UTC' })];
    expect(parseToolCalls('<|tool_call|>[{"name": "get_time", "arguments": {"timezone": "UTC"}}]').calls).toEqual(expected);
    expect(parseToolCalls('<TOOLCALL>[{"name": "get_time", "arguments": {"timezone": "UTC"}}]</TOOLCALL>').calls).toEqual(expected);
    // Source: llama.cpp tests/test-chat.cpp (COMMON_CHAT_FORMAT_COMMAND_R7B): the response tags are layout.
    expect(parseToolCalls("<|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>").content).toBe("Hello, world!\nWhat's up?");
    const cohere = parseToolCalls('<|START_THINKING|>I will call {"name": "x", "arguments": {}}.<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_time", "parameters": {"timezone": "UTC"}}\n]<|END_ACTION|>');
    expect(cohere.calls).toEqual([call('get_time', { timezone: 'UTC' }, '0')]);
    expect(parseToolCalls('<|action_start|><|plugin|>\n{"name": "get_time", "parameters": {"timezone": "UTC"}}<|action_end|>').calls).toEqual(expected);
    expect(parseToolCalls('functools[{"name": "get_time", "arguments": {"timezone": "UTC"}}]').calls).toEqual(expected);
    expect(parseToolCalls('[{"name": "get_time", "arguments": {"timezone": "UTC"}}]').calls).toEqual(expected);
  });
});
