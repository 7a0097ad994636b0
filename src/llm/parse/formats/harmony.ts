import { type Claim, type FormatContext, formatResult, type FormatResult, type FoundProblem, newFound, type Span, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';
import { firstFound, Seeker, type Hit } from './special-tokens.js';

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

/** How far back a header may start before its recipient. */
const HEADER_REACH = 256;

/** Where the header holding `at` begins: the closest <|start|> or <|channel|> before it with no body in between. */
function headerStart(text: string, at: number): number {
  const base = Math.max(0, at - HEADER_REACH);
  const near = text.slice(base, at);
  const body = Math.max(near.lastIndexOf(MESSAGE), near.lastIndexOf('<|end|>'), near.lastIndexOf('<|call|>'));
  const start = near.lastIndexOf(START);
  if (start > body && start >= 0) return base + start;
  const channel = near.lastIndexOf(CHANNEL);
  if (channel > body && channel >= 0) return base + channel;
  // Without special tokens: the channel name just before the recipient (`commentary to=…`).
  const word = /(?:analysis|commentary|final)\s*$/.exec(near.slice(-16));
  return word ? at - word[0].length : at;
}

/** The searches one parse makes, each done once per text. */
class Tokens {
  readonly message: Seeker;
  readonly ends: Seeker[];
  readonly headers: Seeker[];

  constructor(readonly text: string) {
    this.message = new Seeker(text, MESSAGE);
    this.ends = BODY_ENDS.map((t) => new Seeker(text, t));
    this.headers = [START, '\nto=', ' to='].map((t) => new Seeker(text, t));
  }

  end(from: number): Hit | undefined {
    return firstFound(this.ends, from);
  }
}

/** The analysis channel's messages: reasoning, hidden from the formats after this one. */
function analysisSpans(text: string, tokens: Tokens, partial: boolean): { spans: Claim[]; pending?: number } {
  const spans: Claim[] = [];
  const channels = new Seeker(text, `${CHANNEL}analysis`);
  for (let at = channels.find(0); at !== undefined; at = channels.find(at.end)) {
    const message = tokens.message.find(at.end);
    const end = tokens.end(message?.end ?? at.end);
    const near = text.slice(Math.max(0, at.at - 24), at.at);
    const header = near.lastIndexOf(START);
    const begin = header >= 0 && /^<\|start\|>assistant\s*$/.test(near.slice(header)) ? at.at - near.length + header : at.at;
    if (end === undefined) {
      spans.push({ start: begin, end: text.length });
      return partial ? { spans, pending: begin } : { spans };
    }
    const stop = text.startsWith(START, end.at) ? end.at : end.end;
    spans.push({ start: begin, end: stop, closed: true });
  }
  return { spans };
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const tokens = new Tokens(text);
  const analysis = analysisSpans(text, tokens, context.partial);
  let pending = analysis.pending;
  let span = 0;
  const inAnalysis = (at: number): boolean => {
    while (span < analysis.spans.length && analysis.spans[span]!.end <= at) span++;
    const s = analysis.spans[span];
    return s !== undefined && at >= s.start;
  };
  RECIPIENT.lastIndex = 0;
  for (let m = RECIPIENT.exec(text); m !== null; m = RECIPIENT.exec(text)) {
    const at = m.index + m[1]!.length;
    const recipient = m[2]!;
    if (NOT_TOOLS.has(recipient) || inAnalysis(at)) continue;
    const start = headerStart(text, at);
    const afterName = at + 3 + recipient.length;
    const name = recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient;
    const nextHeader = firstFound(tokens.headers, afterName)?.at ?? text.length;
    const message = tokens.message.find(afterName, nextHeader);
    const bodyStart = message?.end ?? afterName;
    const ending = tokens.end(bodyStart);
    // A body ends at its end token; without one, where the next header starts.
    const limit = ending?.at ?? firstFound(tokens.headers, bodyStart)?.at ?? text.length;
    const args = readJsonValue(text, skipHeaderWords(text, bodyStart, limit), context.partial, limit);
    if (args.ok === 'open' || (context.partial && ending === undefined && args.ok !== true)) {
      pending = Math.min(pending ?? start, start);
      break;
    }
    const end = ending !== undefined && !text.startsWith(START, ending.at) ? ending.end : args.end;
    if (args.ok === true) {
      found.calls.push({ start, end, name, arguments: asArguments(args.value) });
    } else {
      const why = text.slice(bodyStart, limit).trim() === '' ? 'no arguments after the header' : `the arguments are not valid JSON: ${args.error}`;
      found.problems.push(problemAt({ start, end: Math.max(end, afterName) }, `Harmony call to '${name}': ${why}`, name));
    }
    RECIPIENT.lastIndex = Math.max(RECIPIENT.lastIndex, end);
  }
  return formatResult(found.calls, found.problems, pending, analysis.spans);
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
  markers: '<=',
  detect: (text) => {
    const channel = text.indexOf(CHANNEL);
    return channel >= 0 ? channel : text.indexOf('=functions.');
  },
  parse,
};
