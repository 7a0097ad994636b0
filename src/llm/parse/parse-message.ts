import { addCall } from './call-shape.js';
import { parseText, type TextSettings } from './parse-text.js';
import { isRecord } from '../../common/json.js';
import { problem, type CallSink } from './types.js';

// A complete assistant message. OpenAI: `tool_calls` (arguments as JSON text; an object is
// tolerated), or the legacy `function_call`. Anthropic: `content` blocks of type `tool_use`.
// A message without structured calls may still carry calls in its text (a model prompted with a
// text protocol, or a server whose own tool parser failed and passed the raw text on), so its
// text content is parsed as free text — but only then: when a message has structured calls, its
// text is commentary.

function raw(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function parseMessage(message: Record<string, unknown>, sink: CallSink, settings: TextSettings): void {
  const calls = message.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) {
    calls.forEach((call, i) => {
      if (isRecord(call) && addCall(call, true, sink, { format: 'openai' }, true)) return;
      const id = isRecord(call) && typeof call.id === 'string' ? call.id : undefined;
      sink.problems.push(problem('UNREADABLE_CALL', `tool_calls[${i}] has no function name`, raw(call), { id, format: 'openai' }));
    });
    return;
  }
  if (isRecord(message.function_call)) {
    if (!addCall(message.function_call, true, sink, { format: 'openai' }, true)) {
      sink.problems.push(problem('UNREADABLE_CALL', 'function_call has no name', raw(message.function_call), { format: 'openai' }));
    }
    return;
  }
  const content = message.content;
  if (typeof content === 'string') {
    parseText(content, sink, settings);
    return;
  }
  if (!Array.isArray(content)) return;
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
  if (!structured && text.length > 0) parseText(text.join('\n'), sink, settings);
}
