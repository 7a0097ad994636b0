import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats, type ToolCallFormat } from '../../src/entry/llm.js';

// The content beside the calls, as inference servers return `content` beside `tool_calls`: the
// model's text with the calls taken out, and what wraps them (tags, sections, fences) and a
// format's own layout. The stream's end() returns the same content as a parse of the whole text,
// whatever the deltas, though it reads a block a piece at a time.

/** The built-in formats as copies: not built in, so a stream given them reads at every delta. */
const everyDelta: readonly ToolCallFormat[] = toolCallFormats().map((f) => ({ ...f }));

function streamed(text: string, size: number, formats?: readonly ToolCallFormat[]) {
  const stream = createToolCallStream(formats === undefined ? undefined : { formats });
  for (let i = 0; i < text.length; i += size) stream.push(text.slice(i, i + size));
  return stream.end();
}

describe('content: the text with the calls taken out', () => {
  it('takes out each call with its tags, sections and fences, and trims what is left', () => {
    const cases: readonly [string, string | null][] = [
      ['Let me check.\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\nDone.', 'Let me check.\n\nDone.'],
      ['I will look.<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>', 'I will look.'],
      ['Here:\n```json\n{"name": "a", "arguments": {"x": 1}}\n```\nThat is all.', 'Here:\n\nThat is all.'],
      ['<minimax:tool_call>\n<invoke name="a">\n<parameter name="x">1</parameter>\n</invoke>\n</minimax:tool_call>', null],
      ['[TOOL_CALLS][{"name": "a", "arguments": {}}]', null],
      ['Sure.\n<tool_call>\n<function=a>{"x": 1}</function>\n</tool_call>\nDone.', 'Sure.\n\nDone.'],
    ];
    for (const [text, content] of cases) expect(parseToolCalls(text).content, text).toBe(content);
  });

  it('takes out a list of calls with its brackets and commas, and the separators between calls', () => {
    const cases: readonly [string, string | null][] = [
      ['[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]', null],
      ['Sure: [{"name": "a", "arguments": {"x": 1}},\n {"name": "b", "arguments": {}}] ok', 'Sure:  ok'],
      ['<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}', null],
      ['Results: {"name": "a", "parameters": {}}; {"name": "b", "parameters": {}} More?', 'Results:  More?'],
    ];
    for (const [text, content] of cases) {
      expect(parseToolCalls(text).calls.map((c) => c.name), text).toEqual(['a', 'b']);
      expect(parseToolCalls(text).content, text).toBe(content);
    }
  });

  it('returns a text with nothing taken out as it is, and leaves what could not be read as a call', () => {
    expect(parseToolCalls('  Just prose.\n').content).toBe('  Just prose.\n');
    const broken = 'Try: <tool_call>{"name": "a", "arguments": {oops</tool_call>';
    const result = parseToolCalls(broken);
    expect(result.calls).toEqual([]);
    expect(result.problems.map((p) => p.code)).toEqual(['UNREADABLE_CALL']);
    expect(result.content).toBe(broken);
  });

  it('leaves a call to a tool that was not offered in the content: it is a problem, not a call', () => {
    const text = 'First <tool_call>{"name": "a", "arguments": {}}</tool_call> then <tool_call>{"name": "nope", "arguments": {}}</tool_call>';
    const result = parseToolCalls(text, { tools: ['a'] });
    expect(result.calls.map((c) => c.name)).toEqual(['a']);
    expect(result.problems.map((p) => p.code)).toEqual(['UNKNOWN_TOOL']);
    expect(result.content).toBe('First  then <tool_call>{"name": "nope", "arguments": {}}</tool_call>');
  });

  it("returns Harmony's final and commentary text, without headers, end tokens or the analysis channel", () => {
    const text =
      '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>' +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Tokyo"}<|call|>';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: { city: 'Tokyo' } }], content: 'Checking.' });
    expect(parseToolCalls('<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>').content).toBe('Hello!');
    // A completion rendered with its generation prompt ends in a header: layout too. An empty body is a call without arguments.
    expect(parseToolCalls('<|start|>assistant<|channel|>commentary to=functions.now <|constrain|>json<|message|><|call|><|start|>assistant')).toMatchObject({ calls: [{ name: 'now', arguments: {} }], content: null });
  });

  it('returns the text beside structured calls as it is, and null when there is none', () => {
    const message = { role: 'assistant', content: 'Calling now: {"name": "x", "arguments": {}}', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } }] };
    expect(parseToolCalls(message).content).toBe('Calling now: {"name": "x", "arguments": {}}');
    expect(parseToolCalls({ role: 'assistant', content: null, tool_calls: message.tool_calls }).content).toBeNull();
    const anthropic = { role: 'assistant', content: [{ type: 'text', text: 'Let me see.' }, { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} }] };
    expect(parseToolCalls(anthropic).content).toBe('Let me see.');
    expect(parseToolCalls({ name: 'a', arguments: {} }).content).toBeNull();
    expect(parseToolCalls(42).content).toBeNull();
  });

  it('returns the content deltas of streamed chunks: as they are beside tool-call deltas, less the calls without', () => {
    const chunk = (delta: Record<string, unknown>) => ({ choices: [{ index: 0, delta }] });
    const withCalls = [chunk({ content: 'Sure, ' }), chunk({ content: 'one moment.' }), chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'a', arguments: '{}' } }] })];
    expect(parseToolCalls(withCalls).content).toBe('Sure, one moment.');
    const textOnly = [chunk({ content: 'Look: <tool>a</tool>' }), chunk({ content: '<args>{}</args> ok' })];
    expect(parseToolCalls(textOnly)).toMatchObject({ calls: [{ name: 'a' }], content: 'Look:  ok' });
  });
});

describe('content from the stream', () => {
  const texts: readonly string[] = [
    // A wrapper's closing tag that arrives after the call is complete.
    'Checking.\n<minimax:tool_call>\n<invoke name="a">\n<parameter name="x">1</parameter>\n</invoke>\n<invoke name="b">\n</invoke>\n</minimax:tool_call>\nDone.',
    'Checking.\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call> Done.',
    '<function=a>{"x": 1}</function> and <tool>b</tool><args>{"y": 2}</args> done',
    '<tool_call>\n<function name="a">{"x": 1}</function>\n</tool_call><tool_call>\n<function name="b">{}</function>\n</tool_call> done',
    '<|python_tag|>{"name": "a", "parameters": {}}<|eom_id|> then <|action_start|><|plugin|>{"name": "b", "parameters": {}}<|action_end|>',
    // A wrapper that opens long before its first call (DSML indents its tags), a section opened before its first call.
    'Plan.\n\n        <｜DSML｜function_calls>\n\n            <｜DSML｜invoke name="a">\n                <｜DSML｜parameter name="x" string="true">v</｜DSML｜parameter>\n            </｜DSML｜invoke>\n        </｜DSML｜function_calls>\nAfter.',
    'Pre.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{"x": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>\nPost',
    // Harmony headers, a fence left open to the end.
    'Hi. <|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x":1}<|call|> after',
    'Here: ```json\n{"name": "a", "arguments": {}}\n{"name": "b"',
    // Lists of calls; a call whose arguments are not JSON, quoted in its problem only up to its end.
    'Sure: [{"name": "a", "arguments": {"x": 1}},\n {"name": "b", "arguments": {}}] ok',
    'Results: {"name": "a", "parameters": {}}; {"name": "b", "parameters": {}} ; {"name": "c", "parameters": {}} More?',
    '<|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x":1}<|call|><|start|>assistant<|channel|>commentary to=functions.b<|message|>foo<|call|><|start|>assistant<|channel|>final<|message|>Done.',
  ];

  it('is what a parse of the whole text returns, whatever the delta size, also reading at every delta', () => {
    for (const text of texts) {
      const whole = parseToolCalls(text);
      expect(whole.calls.length, text).toBeGreaterThan(0);
      expect(whole.content === null || whole.content.length < text.length, text).toBe(true);
      for (const size of [1, 2, 3, 7, 13, 64]) {
        expect(streamed(text, size), `${text}, deltas of ${size}`).toEqual(whole);
        expect(streamed(text, size, everyDelta), `${text}, deltas of ${size}, reading at every delta`).toEqual(whole);
      }
    }
  });

  it('takes the wrapper out with the call, though the call was handed over before its closing tag came', () => {
    const stream = createToolCallStream();
    const text = 'Before.\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>';
    expect(stream.push(text).map((c) => c.name)).toEqual(['a']);
    expect(stream.push('\n</tool_call>\nAfter.')).toEqual([]);
    expect(stream.end().content).toBe('Before.\n\nAfter.');
  });
});
