// Tool-call parsing (SPEC §4, issue 6 performance): a 4 KB model message with two calls embedded
// in prose (target ≤ 50 µs), and 200 streamed chunks assembled into calls (target ≤ 100 µs). Each
// figure sits next to a hand-written baseline that does the least the same job needs: JSON.parse
// of the two calls' JSON cut out by known offsets, and a plain loop that concatenates the
// argument pieces and parses them.

import { parseToolCalls } from '../src/llm/index.js';
import { nsPerOp, runIfMain, verdict, type BenchResult } from './harness.js';

const TEXT_TARGET_US = 50;
const STREAM_TARGET_US = 100;

const CALL_A = '{"name": "find_city", "arguments": {"text": "我下周要去大阪出差，顺便看看京都", "country": "Japan"}}';
const CALL_B = '{"name": "local_time", "arguments": {"timezone": "Asia/Tokyo", "hour12": false, "note": "use {braces} and \\"quotes\\" freely"}}';

/** About 4 KB: a model that thinks aloud, with code-ish noise, and two calls (one fenced, one in prose). */
function message(): string {
  const prose =
    'Sure — let me work this out step by step. The user wants the local time in the city they mention, ' +
    'and some facts about it (population, country). 首先需要找到城市，然后查询当地时间。I will not guess: ' +
    'the tools know better than I do, and a wrong answer is worse than a slow one. Note that {placeholders} ' +
    'like this are not calls, and neither is a data object such as {"name": "Alice", "age": 31}. ';
  let text = '';
  while (text.length < 1700) text += prose;
  text += `\n\n\`\`\`json\n${CALL_A}\n\`\`\`\n\n`;
  while (text.length < 3500) text += prose;
  text += `Then: ${CALL_B}\n`;
  while (text.length < 4096) text += prose.slice(0, Math.min(prose.length, 4096 - text.length));
  return text;
}

function chunks(count: number): { chunks: unknown[]; pieces: string[] } {
  const args = JSON.stringify({ items: Array.from({ length: 60 }, (_, i) => ({ id: i, label: `第${i}项 item` })) });
  const size = Math.ceil(args.length / (count - 2));
  const pieces: string[] = [];
  for (let i = 0; i < args.length; i += size) pieces.push(args.slice(i, i + size));
  const wrap = (delta: Record<string, unknown>) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
  const list: unknown[] = [wrap({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'store', arguments: '' } }] })];
  for (const p of pieces) list.push(wrap({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
  while (list.length < count) list.push(wrap({}));
  return { chunks: list, pieces };
}

export async function benchLlmParse(): Promise<BenchResult> {
  const text = message();
  const atA = text.indexOf(CALL_A);
  const atB = text.indexOf(CALL_B);
  const parsed = parseToolCalls(text);
  if (parsed.calls.length !== 2 || parsed.problems.length !== 0) throw new Error(`bench message parsed wrong: ${JSON.stringify(parsed)}`);

  const textNs = nsPerOp(() => parseToolCalls(text), 20_000);
  const textBaseNs = nsPerOp(() => [JSON.parse(text.slice(atA, atA + CALL_A.length)), JSON.parse(text.slice(atB, atB + CALL_B.length))], 200_000);

  const { chunks: stream, pieces } = chunks(200);
  const streamed = parseToolCalls(stream);
  if (streamed.calls.length !== 1) throw new Error('bench stream parsed wrong');
  const streamNs = nsPerOp(() => parseToolCalls(stream), 20_000);
  const streamBaseNs = nsPerOp(() => {
    let args = '';
    for (const p of pieces) args += p;
    return JSON.parse(args) as unknown;
  }, 50_000);

  const textUs = textNs / 1000;
  const streamUs = streamNs / 1000;
  return {
    name: 'llm-parse',
    lines: [
      `${(text.length / 1024).toFixed(1)} KB message, two embedded calls: ${textUs.toFixed(1)} µs/op (target ≤ ${TEXT_TARGET_US} µs: ${verdict(textUs <= TEXT_TARGET_US)}); ` +
        `baseline JSON.parse of the two calls at known offsets ${(textBaseNs / 1000).toFixed(2)} µs/op`,
      `${stream.length} streamed chunks → 1 call: ${streamUs.toFixed(1)} µs/op (target ≤ ${STREAM_TARGET_US} µs: ${verdict(streamUs <= STREAM_TARGET_US)}); ` +
        `baseline string concatenation + JSON.parse ${(streamBaseNs / 1000).toFixed(2)} µs/op`,
    ],
  };
}

await runIfMain(import.meta.url, benchLlmParse);
