import type { ContentSource } from './call-content.js';
import { addCall } from './call-shape.js';
import { parseText, type TextSettings } from './parse-text.js';
import { isRecord } from '../../common/json.js';
import { problem, type CallSink } from './types.js';

// A complete assistant message. OpenAI: `tool_calls` (arguments as JSON text; an object is
// tolerated), or the legacy `function_call`. Anthropic: `content` blocks of type `tool_use`.
// A message without structured calls may still carry calls in its text (a model prompted with a
// text protocol, or a server whose own tool parser failed and passed the raw text on), so its
// text content is parsed as free text — but only then: when a message has structured calls, its
// text is commentary, and is the content as it is.

function raw(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Adds the message's calls to the sink; returns where its content comes from. */
export function parseMessage(message: Record<string, unknown>, sink: CallSink, settings: TextSettings): ContentSource {
  const calls = message.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) {
    calls.forEach((call, i) => {
      if (isRecord(call) && addCall(call, true, sink, { format: 'openai' }, true)) return;
      const id = isRecord(call) && typeof call.id === 'string' ? call.id : undefined;
      sink.problems.push(problem('UNREADABLE_CALL', `tool_calls[${i}] has no function name`, raw(call), { id, format: 'openai' }));
    });
    return given(message.content);
  }
  if (isRecord(message.function_call)) {
    if (!addCall(message.function_call, true, sink, { format: 'openai' }, true)) {
      sink.problems.push(problem('UNREADABLE_CALL', 'function_call has no name', raw(message.function_call), { format: 'openai' }));
    }
    return given(message.content);
  }
  const content = message.content;
  if (typeof content === 'string') return parseText(content, sink, settings);
  if (!Array.isArray(content)) return undefined;
  const text: string[] = [];
  let structured = false;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'tool_use') {
      structured = true;
      if (!addCall(block, true, sink, { format: 'anthropic' }, true)) {
        sink.problems.push(problem('UNREADABLE_CALL', 'tool_use block has no name', raw(block), { id: typeof block.id === 'string' ? block.id : undefined, format: 'anthropic' }));
      }
    } else if (typeof block.text === 'string') {
      text.push(block.text);
    }
  }
  if (text.length === 0) return undefined;
  return structured ? { text: text.join('\n') } : parseText(text.join('\n'), sink, settings);
}

/** The text content of a message that carries structured calls, as it is: a string, or its text blocks joined. */
function given(content: unknown): ContentSource {
  if (typeof content === 'string') return { text: content };
  if (!Array.isArray(content)) return undefined;
  const text = content.filter((b): b is Record<string, unknown> => isRecord(b) && typeof b.text === 'string').map((b) => b.text as string);
  return text.length === 0 ? undefined : { text: text.join('\n') };
}
