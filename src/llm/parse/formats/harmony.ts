import type { FormatContext, FormatResult, FoundProblem, Span, ToolCallFormat } from '../format.js';
import { asArguments, newFound, readJsonValue } from '../json-calls.js';
import { nextOf as firstOf } from './special-tokens.js';

// gpt-oss (OpenAI's Harmony response format). A message is a header and a body:
//
//   <|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>
//   <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Tokyo"}<|call|>
//
// The call's name is the recipient (`to=functions.NAME`, in the header before or after the
// channel); the body is its JSON arguments, ended by <|call|>. The completion starts after the
// prompt's `<|start|>assistant`, so the first header may begin at <|channel|>. The analysis
// channel is the model's reasoning: it is hidden from every later format. Servers that drop
// special tokens leave `commentary to=functions.get_weather json{"location":"Tokyo"}`, which is
// read too. A recipient outside `functions.` (`browser.search`, `python`) keeps its full name.
// Source: OpenAI, "OpenAI Harmony Response Format" (cookbook.openai.com/articles/openai-harmony);
// vLLM `openai_tool_parser.py`.

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
/** Tokens that end a message body. */
const BODY_ENDS = ['<|call|>', '<|end|>', '<|return|>', START];
const RECIPIENT = /(^|[\s>|])to=([A-Za-z0-9_.:/-]+)/g;
/** Recipients that address a message to the conversation, not to a tool (tool results are written `to=assistant`). */
const NOT_TOOLS = new Set(['assistant', 'user', 'all', 'system', 'developer']);

/** Where the header holding `at` begins: the closest <|start|> or <|channel|> before it with no body in between. */
function headerStart(text: string, at: number): number {
  const body = Math.max(text.lastIndexOf(MESSAGE, at), text.lastIndexOf('<|end|>', at), text.lastIndexOf('<|call|>', at));
  const start = text.lastIndexOf(START, at);
  if (start > body && start >= 0) return start;
  const channel = text.lastIndexOf(CHANNEL, at);
  if (channel > body && channel >= 0) return channel;
  // Without special tokens: the channel name just before the recipient (`commentary to=…`).
  const word = /(?:analysis|commentary|final)\s*$/.exec(text.slice(Math.max(0, at - 16), at));
  return word ? at - word[0].length : at;
}

/** The analysis channel's messages: reasoning, hidden from the formats after this one. */
function analysisSpans(text: string, partial: boolean): { spans: Span[]; pending?: number } {
  const spans: Span[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(`${CHANNEL}analysis`, from);
    if (at < 0) return { spans };
    const end = firstOf(text, BODY_ENDS, text.indexOf(MESSAGE, at) >= 0 ? text.indexOf(MESSAGE, at) + MESSAGE.length : at + 1);
    const header = text.lastIndexOf(START, at);
    const begin = header >= 0 && /^<\|start\|>assistant\s*$/.test(text.slice(header, at)) ? header : at;
    if (end === undefined) {
      spans.push({ start: begin, end: text.length });
      return partial ? { spans, pending: begin } : { spans };
    }
    const stop = end.token === START ? end.at : end.at + end.token.length;
    spans.push({ start: begin, end: stop });
    from = stop;
  }
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const analysis = analysisSpans(text, context.partial);
  let pending = analysis.pending;
  const inAnalysis = (at: number): boolean => analysis.spans.some((s) => at >= s.start && at < s.end);
  RECIPIENT.lastIndex = 0;
  for (let m = RECIPIENT.exec(text); m !== null; m = RECIPIENT.exec(text)) {
    const at = m.index + m[1]!.length;
    const recipient = m[2]!;
    if (NOT_TOOLS.has(recipient) || inAnalysis(at)) continue;
    const start = headerStart(text, at);
    const afterName = at + 3 + recipient.length;
    const name = recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient;
    const message = text.indexOf(MESSAGE, afterName);
    const nextHeader = firstOf(text, [START, '\nto=', ' to='], afterName)?.at ?? text.length;
    const bodyStart = message >= 0 && message < nextHeader ? message + MESSAGE.length : afterName;
    const ending = firstOf(text, BODY_ENDS, bodyStart);
    const args = readJsonValue(text, skipHeaderWords(text, bodyStart, ending?.at ?? text.length), context.partial, ending?.at ?? text.length);
    if (args.ok === 'open' || (context.partial && ending === undefined && args.ok !== true)) {
      pending = Math.min(pending ?? start, start);
      break;
    }
    const end = ending !== undefined && ending.token !== START ? ending.at + ending.token.length : args.end;
    if (args.ok === true) {
      found.calls.push({ start, end, name, arguments: asArguments(args.value) });
    } else {
      const why = text.slice(bodyStart, ending?.at ?? text.length).trim() === '' ? 'no arguments after the header' : `the arguments are not valid JSON: ${args.error}`;
      found.problems.push(problemAt({ start, end: Math.max(end, afterName) }, `Harmony call to '${name}': ${why}`, name));
    }
    RECIPIENT.lastIndex = Math.max(RECIPIENT.lastIndex, end);
  }
  return { calls: found.calls, problems: found.problems, claims: analysis.spans, ...(pending !== undefined ? { pending } : {}) };
}

/** Skips `<|constrain|>json` / ` json` / ` code` between the recipient and the body. */
function skipHeaderWords(text: string, from: number, limit: number): number {
  let at = from;
  for (;;) {
    const rest = /^\s*(?:<\|constrain\|>\s*)?(?:json|code)?\s*(?:<\|message\|>)?/.exec(text.slice(at, Math.min(limit, at + 40)));
    const step = rest?.[0].length ?? 0;
    if (step === 0) return at;
    at += step;
  }
}

function problemAt(span: Span, message: string, name: string): FoundProblem {
  return { start: span.start, end: span.end, message, name, code: 'INVALID_ARGUMENTS' };
}

export const harmony: ToolCallFormat = {
  name: 'harmony',
  models: 'gpt-oss (OpenAI Harmony)',
  detect: (text) => {
    const channel = text.indexOf(CHANNEL);
    return channel >= 0 ? channel : text.indexOf('=functions.');
  },
  parse,
};
