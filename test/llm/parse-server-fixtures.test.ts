import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolCallStream, parseToolCalls, type ParseOptions, type ParseResult } from '../../src/entry/llm.js';

// The inference servers' own parser tests, as data: cases transcribed from vLLM's
// (tests/tool_use/, tests/entrypoints/openai/tool_parsers/, tests/tool_parsers/), SGLang's
// (test/registered/function_call/test_function_call_parser.py) and llama.cpp's (tests/test-chat.cpp,
// tests/test-chat-parser.cpp), each file naming the source file and the commit it was read at.
// Every case runs as a whole text and streamed in deltas of 1, 7 and 64 characters, and must come
// out as the server's test expects:
//
//   calls    the names and arguments, in order (and the ids where the server's test asserts them)
//   content  the text beside the calls, compared trimmed (servers differ on the spaces around it:
//            vLLM often keeps them, SGLang strips them), an empty one as null
//
// A case may say where the engine reads a text otherwise, on purpose (`ours`, with the reason);
// `problems` are the codes of the problems it reports (servers have none: they drop what they
// cannot read); `streamed`, where a stream cannot match the whole text (a call handed over before
// the text that makes it reasoning came). docs/llm/tool-call-formats.md lists the differences.

interface Call {
  readonly name: string;
  readonly arguments: Record<string, unknown> | string;
  readonly id?: string;
}

interface Case {
  readonly name: string;
  readonly text: string;
  /** The tools offered for this case (null: none, whatever the fixture offers). */
  readonly tools?: ParseOptions['tools'] | null;
  readonly formats?: readonly string[];
  /** What the server's test expects; left out when it asserts nothing about the calls. */
  readonly calls?: readonly Call[];
  /** The content the server's test expects; left out when it asserts none. */
  readonly content?: string | null;
  readonly asserts?: string;
  readonly note?: string;
  readonly problems?: readonly string[];
  readonly ours?: { readonly calls?: readonly Call[]; readonly content?: string | null; readonly why: string };
  /** Where a stream cannot give what the whole text gives (it has handed a call over before text that undoes it came): the names it hands over. */
  readonly streamed?: { readonly calls: readonly string[]; readonly why: string };
}

interface Fixture {
  readonly source: { readonly repository: string; readonly path: string; readonly commit: string };
  readonly licence: string;
  readonly notes?: string;
  readonly tools?: ParseOptions['tools'];
  readonly cases: readonly Case[];
}

const ROOT = join(import.meta.dirname, '..', 'fixtures', 'llm', 'servers');
const fixtures: { readonly file: string; readonly fixture: Fixture }[] = readdirSync(ROOT).flatMap((server) =>
  readdirSync(join(ROOT, server))
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ file: `${server}/${name}`, fixture: JSON.parse(readFileSync(join(ROOT, server, name), 'utf8')) as Fixture })),
);

const SIZES = [1, 7, 64];

function options(fixture: Fixture, c: Case): ParseOptions | undefined {
  const tools = c.tools === null ? undefined : (c.tools ?? fixture.tools);
  if (tools === undefined && c.formats === undefined) return undefined;
  return { ...(tools !== undefined ? { tools } : {}), ...(c.formats !== undefined ? { formats: c.formats } : {}) };
}

/** The server's content as compared: trimmed, empty as null. */
function normal(content: string | null): string | null {
  const t = content?.trim() ?? '';
  return t === '' ? null : t;
}

function streamed(text: string, size: number, opts: ParseOptions | undefined): { handed: string[]; result: ParseResult } {
  const stream = createToolCallStream(opts);
  const handed: string[] = [];
  for (let i = 0; i < text.length; i += size) for (const call of stream.push(text.slice(i, i + size))) handed.push(call.id);
  return { handed, result: stream.end() };
}

describe('the inference servers’ parser tests, read as they expect', () => {
  it('every fixture names its source file, the commit it was read at and its licence', () => {
    expect(fixtures.length).toBeGreaterThan(0);
    for (const { file, fixture } of fixtures) {
      expect(fixture.source.repository, file).toMatch(/^(vllm-project\/vllm|sgl-project\/sglang|ggml-org\/llama\.cpp)$/);
      expect(fixture.source.path, file).toMatch(/^tests?\//);
      expect(fixture.source.commit, file).toMatch(/^[0-9a-f]{40}$/);
      expect(fixture.licence, file).toBe(fixture.source.repository === 'ggml-org/llama.cpp' ? 'MIT' : 'Apache-2.0');
      expect(fixture.cases.length, file).toBeGreaterThan(0);
      for (const c of fixture.cases) expect(c.calls !== undefined || c.ours?.calls !== undefined, `${file}: ${c.name}`).toBe(true);
    }
  });

  for (const { file, fixture } of fixtures) {
    describe(file, () => {
      it.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
        const opts = options(fixture, c);
        const whole = parseToolCalls(c.text, opts);
        const calls = c.ours?.calls ?? c.calls!;
        expect(whole.calls.map((call) => ({ name: call.name, arguments: call.arguments })), 'calls').toEqual(calls.map((call) => ({ name: call.name, arguments: call.arguments })));
        calls.forEach((call, i) => {
          if (call.id !== undefined) expect(whole.calls[i]!.id, `id of call ${i}`).toBe(call.id);
        });
        expect(whole.problems.map((p) => p.code), 'problems').toEqual(c.problems ?? []);
        if (c.ours !== undefined && 'content' in c.ours) expect(whole.content, 'content (ours)').toBe(c.ours.content);
        else if (c.content !== undefined) expect(normal(whole.content), 'content').toBe(normal(c.content));
        for (const size of SIZES) {
          const { handed, result } = streamed(c.text, size, opts);
          if (c.streamed !== undefined) {
            expect(result.calls.map((call) => call.name), `streamed in deltas of ${size} (${c.streamed.why})`).toEqual(c.streamed.calls);
            continue;
          }
          expect(result, `streamed in deltas of ${size}`).toEqual(whole);
          // Each call handed over once, by a push or at the end, with the id end() gives it.
          expect(new Set(handed).size, `streamed in deltas of ${size}: handed over once`).toBe(handed.length);
          expect(handed.every((id) => result.calls.some((call) => call.id === id)), `streamed in deltas of ${size}: ids`).toBe(true);
        }
      });
    });
  }
});
