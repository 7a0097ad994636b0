import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, toolCallFormats } from '../../src/entry/llm.js';
import { readFormats } from '../../src/llm/parse/read-formats.js';

// How far the stream settles after a read. A block a format reports `closed` (its end token came)
// is passed like a call, so the stream does not read the whole block again at the next trigger;
// and once a read leaves nothing unfinished and its text's last marker character is a closing `>`,
// the stream is calm again and the prose after the calls is not read on every `}` or `)`. Neither
// may cost a call: each is still handed over by the push that completes it.

const read = (text: string) => readFormats(text, toolCallFormats(), { partial: true, atMessageStart: false, tools: undefined });
const slice = (text: string) => (span: { start: number; end: number }) => text.slice(span.start, span.end);

/** Streams `text` in deltas of `size`; each call with the length of the text pushed when it was handed over. */
function streamed(text: string, size: number): { emitted: { name: string; at: number }[]; result: ReturnType<typeof parseToolCalls> } {
  const stream = createToolCallStream();
  const emitted: { name: string; at: number }[] = [];
  for (let i = 0; i < text.length; i += size) for (const c of stream.push(text.slice(i, i + size))) emitted.push({ name: c.name, at: Math.min(text.length, i + size) });
  return { emitted, result: stream.end() };
}

/** Every call is handed over by the delta that holds the end of `completions[k]` (or: between the ends of the earliest and the latest text that may complete it), for any delta size. */
function expectHandedOverOnTime(text: string, names: string[], completions: (string | [string, string])[]): void {
  for (const size of [1, 2, 3, 5, 8, 13]) {
    const { emitted, result } = streamed(text, size);
    expect(result, `deltas of ${size}`).toEqual(parseToolCalls(text));
    expect(emitted.map((e) => e.name), `deltas of ${size}`).toEqual(names);
    let from = 0;
    completions.forEach((completion, k) => {
      const [first, last] = typeof completion === 'string' ? [completion, completion] : completion;
      const complete = text.indexOf(first, from) + first.length;
      const latest = text.indexOf(last, from) + last.length;
      from = complete;
      expect(emitted[k]!.at, `call ${k}, deltas of ${size}`).toBeGreaterThanOrEqual(complete);
      expect(emitted[k]!.at, `call ${k}, deltas of ${size}`).toBeLessThan(latest + size);
    });
  }
}

describe('readFormats: closed claims', () => {
  it('a block whose end token came is closed; one still open is not', () => {
    const kimi = '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": 1}<|tool_call_end|><|tool_calls_section_end|> and on';
    expect(read(kimi).closed.map(slice(kimi))).toEqual([kimi.slice(0, -' and on'.length)]);
    expect(read(kimi.slice(0, kimi.indexOf('<|tool_calls_section_end|>'))).closed).toEqual([]);
    const deepseek = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{"x": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    expect(read(`${deepseek} then`).closed.map(slice(deepseek))).toEqual([deepseek]);
    expect(read(deepseek.slice(0, -3)).closed).toEqual([]);
  });

  it('a Harmony analysis message is closed by its end token', () => {
    const analysis = '<|channel|>analysis<|message|>Need the city first.<|end|>';
    expect(read(`${analysis}<|start|>assistant`).closed.map(slice(analysis))).toEqual([analysis]);
    expect(read(analysis.slice(0, -3)).closed).toEqual([]);
  });

  it('a code block is closed by its fence, not by the calls read so far', () => {
    const block = '```tool_code\na(x=1)\n```';
    expect(read(`${block}\nprose`).closed.map(slice(block))).toEqual([block]);
    // The calls so far are handed over, and the block may hold more to come.
    const open = read('```tool_code\na(x=1)\n');
    expect(open.calls.map((c) => c.name)).toEqual(['a']);
    expect(open.closed).toEqual([]);
  });
});

describe('createToolCallStream: settling past closed blocks and calming after the calls', () => {
  const prose = 'Some prose (with parentheses) and {placeholders}, then: ';

  it('a second block after a closed one is still handed over by the push that completes it', () => {
    const kimi = (name: string) => `<|tool_calls_section_begin|><|tool_call_begin|>functions.${name}:0<|tool_call_argument_begin|>{"x": 1}<|tool_call_end|><|tool_calls_section_end|>`;
    expectHandedOverOnTime(`${prose}${kimi('a')} (more) {b} ${prose}${kimi('b')} done (x).`, ['a', 'b'], ['<|tool_call_end|>', '<|tool_call_end|>']);
    const code = (name: string) => `\`\`\`tool_code\n${name}(x=1)\n\`\`\``;
    expectHandedOverOnTime(`${prose}${code('a')} (more) {b} ${prose}${code('b')} done (x).`, ['a', 'b'], [['a(x=1)', 'a(x=1)\n```'], ['b(x=1)', 'b(x=1)\n```']]);
  });

  it('after a call that ends the read text, a marker begun by a backtick or a bracket and finished by letters is still found', () => {
    const hermes = '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>';
    expectHandedOverOnTime(`${prose}${hermes}\`\`\`json\n{"name": "b", "arguments": {"x": 1}}\n\`\`\` (end)`, ['a', 'b'], ['</tool_call>', '{"x": 1}}']);
    expectHandedOverOnTime(`${prose}${hermes} now, and \`\`\`json\n{"name": "b"}\n\`\`\``, ['a', 'b'], ['</tool_call>', '{"name": "b"}']);
    expectHandedOverOnTime(`${prose}${hermes}[TOOL_CALLS]b[ARGS]{"x": 1} (end)`, ['a', 'b'], ['</tool_call>', '{"x": 1}']);
    expectHandedOverOnTime(`${prose}${hermes} {"name": "b", "arguments": {"x": 1}} (end)`, ['a', 'b'], ['</tool_call>', '{"x": 1}}']);
    expectHandedOverOnTime(`${prose}${hermes}\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call> (end)`, ['a', 'b'], ['</tool_call>', '</tool_call>']);
  });

  it('prose settled without being cut still counts for the line and column of a problem after it', () => {
    const prose = 'A line of prose (with a {placeholder}) and a colon: here.\n'.repeat(120);
    for (const calls of ['<tool_call>\n{"name": "a", "arguments": {"x": 1}\n</tool_call>', '[TOOL_CALLS]a[ARGS]{"x": }', '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call> then <tool_call>oops']) {
      const text = `${prose}${calls}\n${prose}`;
      const whole = parseToolCalls(text);
      expect(whole.problems.length).toBeGreaterThan(0);
      for (const size of [1, 8, 100]) expect(streamed(text, size).result, `deltas of ${size}`).toEqual(whole);
    }
  });

  // A read that settles at a call's marker leaves the keys, open braces and `tool_use` of the text
  // after it to be worked out when calm comes back: what comes after the calls must still count.
  it('after calls read at their markers, JSON calls in the prose that follows are still handed over on time', () => {
    const hermes = '<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>';
    const tail = 'Note {"name": "b", "arguments": {"y": 2}} and then {"type": "tool_use", "name": "c", "input": {}} done.';
    expectHandedOverOnTime(`Sure.\n${hermes}\n${tail}`, ['a', 'b', 'c'], ['</tool_call>', '"y": 2}}', '"input": {}}']);
    // The keys right after the block's end tag, in the delta that ends it.
    expectHandedOverOnTime(`Sure.\n${hermes}{"name": "b", "arguments": {}} then`, ['a', 'b'], ['</tool_call>', '"arguments": {}}']);
    const kimi = '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": 1}<|tool_call_end|><|tool_calls_section_end|>';
    expectHandedOverOnTime(`Sure. ${kimi} ${tail}`, ['a', 'b', 'c'], ['<|tool_call_end|>', '"y": 2}}', '"input": {}}']);
  });
});
