import { contentOf } from '../parse/call-content.js';
import { checkNames } from '../parse/check-names.js';
import { toolCallFormats } from '../parse/format-registry.js';
import { toKnownTools } from '../parse/known-tools.js';
import { parseText } from '../parse/parse-text.js';
import { newSink, type ParseProblem } from '../parse/types.js';
import type { ChatReply, FunctionDefinition, WireToolCall } from './wire.js';

// `text_calls: auto`: an OpenAI-compatible server whose own tool parser did not
// recognise the model's output (or that has none) returns the calls as plain content, and the
// loop would take them for a final answer. So when a reply has no `tool_calls` but its text holds
// calls in a known format, they are read with the offered tools (a name the step does not offer
// is a problem, not a call; values written as text get their schema types) and the reply is
// rewritten as the server should have sent it: the calls as `tool_calls`, with ids of our own,
// and the text without them (the content parseToolCalls returns, call-content.ts). The turn's
// event says which formats were read and what could not be.

export type TextCallsMode = 'auto' | 'off';

/** What `agent:turn` carries when the turn's calls were read from its text. */
export interface TextCallsNote {
  /** The formats the calls were written in (`hermes`, `harmony`, …). */
  readonly formats: readonly string[];
  /** How many calls were read (and are now in the turn's `tool_calls`). */
  readonly calls: number;
  /** What looked like a call and was not one: unknown names, unreadable arguments. */
  readonly problems: readonly ParseProblem[];
}

export type ReplyWithTextCalls = ChatReply & { readonly textCalls?: TextCallsNote };

/** Ids the APIs accept everywhere (Mistral wants exactly 9 letters and digits), unique within the conversation. */
function textCallId(turn: number, k: number): string {
  return `t${turn.toString(36).padStart(3, '0')}c${k.toString(36).padStart(4, '0')}`.slice(-9);
}

/** `reply` as it is, or with the calls its text holds moved into `tool_calls`. */
export function withTextCalls(reply: ChatReply, mode: TextCallsMode | undefined, offered: readonly FunctionDefinition[], turn: number): ReplyWithTextCalls {
  const content = reply.message.content;
  if (mode === 'off' || (reply.message.tool_calls?.length ?? 0) > 0 || content === null || content.trim() === '') return reply;
  const sink = newSink(toKnownTools(offered));
  const source = parseText(content, sink, { formats: toolCallFormats() });
  if (sink.calls.length === 0 && sink.problems.length === 0) return reply;
  checkNames(sink);
  const note = (calls: number): TextCallsNote => ({
    formats: [...new Set(sink.calls.map((c) => c.format ?? 'json'))],
    calls,
    problems: sink.problems,
  });
  if (sink.calls.length === 0) return { ...reply, textCalls: note(0) };
  const toolCalls: WireToolCall[] = sink.calls.map((call, k) => ({
    id: textCallId(turn, k),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  return {
    ...reply,
    message: { role: 'assistant', content: contentOf(source, sink.calls), tool_calls: toolCalls },
    textCalls: note(toolCalls.length),
  };
}
