import { type Claim, type FormatContext, formatResult, type FormatResult, type FoundProblem, newFound, type Span, type ToolCallFormat } from '../format.js';
import { asArguments, readJsonValue } from '../json-calls.js';
import { firstFound, Seeker, type Hit } from './special-tokens.js';
import { tagMayFollow } from './xml-tags.js';

// gpt-oss (OpenAI's Harmony response format). A message is a header and a body:
//
//   <|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>
//   <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Tokyo"}<|call|>
//
// The call's name is the recipient (`to=functions.NAME`, in the header before or after the
// channel); the body is its JSON arguments, ended by <|call|>. The completion starts after the
// prompt's `<|start|>assistant`, so the first header may begin at <|channel|>. The analysis
// channel is the model's reasoning: it is hidden from every later format (a header that names a
// tool is a call whatever its channel). The content is the text of the final and commentary
// messages: headers, end tokens and reasoning are layout (claims marked `hide`). Servers that drop
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

/** Whether `to=` in a header names a tool (the message is a call), not the conversation. */
function toolRecipient(header: string): boolean {
  RECIPIENT_IN_HEADER.lastIndex = 0;
  for (let m = RECIPIENT_IN_HEADER.exec(header); m !== null; m = RECIPIENT_IN_HEADER.exec(header)) if (!NOT_TOOLS.has(m[2]!)) return true;
  return false;
}

const RECIPIENT_IN_HEADER = /(^|[\s>|])to=([A-Za-z0-9_.:/-]+)/g;
const ANALYSIS = /<\|channel\|>\s*analysis\b/;
const AUTHOR = /^<\|start\|>\s*([^\s<]+)/;

/**
 * The messages that are not calls, as claims marked `hide`: an analysis message whole (the
 * model's reasoning, also hidden from the formats after this one) and one another author wrote
 * (a tool's result), and of the others the header and the end token, so the content is the text
 * of the model's final and commentary messages. A message
 * whose header names a tool is a call, read by `parse`. While streaming, a header still arriving
 * is where the text is unfinished (`pending`): a stream never settles inside one.
 */
function layout(text: string, tokens: Tokens, partial: boolean): { spans: Claim[]; analysis: Span[]; pending?: number } {
  const spans: Claim[] = [];
  const analysis: Span[] = [];
  let from = 0;
  for (let message = tokens.message.find(0); message !== undefined; message = tokens.message.find(Math.max(from, message.end))) {
    const at = firstHeader(text, from, message.at);
    const header = text.slice(at, message.at);
    const end = tokens.end(message.end);
    const toTool = toolRecipient(header);
    // Reasoning, or a message some other author wrote (a tool's result, `<|start|>functions.x to=assistant`): no text of the model's.
    const author = AUTHOR.exec(header)?.[1];
    if (!toTool && (ANALYSIS.test(header) || (author !== undefined && author !== 'assistant'))) {
      if (end === undefined) {
        spans.push({ start: at, end: text.length, hide: true });
        analysis.push({ start: at, end: text.length });
        return partial ? { spans, analysis, pending: at } : { spans, analysis };
      }
      const stop = text.startsWith(START, end.at) ? end.at : end.end;
      spans.push({ start: at, end: stop, closed: true, hide: true });
      analysis.push({ start: at, end: stop });
    } else if (!toTool) {
      spans.push({ start: at, end: message.end, closed: true, hide: true });
      if (end !== undefined && !text.startsWith(START, end.at)) spans.push({ start: end.at, end: end.end, closed: true, hide: true });
    }
    if (end === undefined) return { spans, analysis };
    from = text.startsWith(START, end.at) ? end.at : end.end;
  }
  // A header with no body yet: while streaming, the text is unfinished there; at the end, layout
  // (a completion rendered with its generation prompt ends with `<|start|>assistant`).
  const open = firstHeader(text, from, text.length);
  if (open >= text.length) return { spans, analysis };
  if (partial) return { spans, analysis, pending: open };
  spans.push({ start: open, end: text.length, closed: true, hide: true });
  return { spans, analysis };
}

/** Where the first header token (<|start|> or <|channel|>) at or after `from` and before `limit` is; `limit` when none. */
function firstHeader(text: string, from: number, limit: number): number {
  const start = text.indexOf(START, from);
  const channel = text.indexOf(CHANNEL, from);
  const first = start < 0 ? channel : channel < 0 ? start : Math.min(start, channel);
  return first < 0 || first > limit ? limit : first;
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const tokens = new Tokens(text);
  const messages = layout(text, tokens, context.partial);
  let pending = messages.pending;
  let span = 0;
  const inAnalysis = (at: number): boolean => {
    while (span < messages.analysis.length && messages.analysis[span]!.end <= at) span++;
    const s = messages.analysis[span];
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
    if (args.ok !== true && message !== undefined && ending !== undefined && text.slice(bodyStart, limit).trim() === '') {
      // A whole message with an empty body: a call without arguments (vLLM passes its arguments on as '').
      found.calls.push({ start, end, name, arguments: {} });
    } else if (args.ok === true) {
      found.calls.push({ start, end, name, arguments: asArguments(args.value) });
      // Its <|call|> may still be on the way: read again once it has come.
      if (context.partial && ending === undefined && tagMayFollow(text, args.end)) pending = Math.min(pending ?? start, start);
    } else {
      const why = text.slice(bodyStart, limit).trim() === '' ? 'no arguments after the header' : `the arguments are not valid JSON: ${args.error}`;
      found.problems.push(problemAt({ start, end: Math.max(end, afterName) }, `Harmony call to '${name}': ${why}`, name));
    }
    RECIPIENT.lastIndex = Math.max(RECIPIENT.lastIndex, end);
  }
  return formatResult(found.calls, found.problems, pending, messages.spans);
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
