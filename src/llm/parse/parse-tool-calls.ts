import { assembleStream } from './assemble-stream.js';
import { contentOf, type ContentSource } from './call-content.js';
import { addCall } from './call-shape.js';
import { assignIds } from './call-ids.js';
import { checkNames } from './check-names.js';
import { checkParseOptions, type ParseOptions, type ParseSettings } from './parse-options.js';
import { parseMessage } from './parse-message.js';
import { parseText } from './parse-text.js';
import { isRecord } from '../../common/json.js';
import { newSink, problem, type CallSink, type ParseResult } from './types.js';

// One entry point for every way a model hands over calls. What it takes:
//
//   string                       free text in any registered format (format-registry.ts)
//   array                        streamed chunks, their deltas, or tool-call fragments
//   { tool_calls | content … }   an assistant message (OpenAI or Anthropic)
//   { choices: [ … ] }           a whole chat-completion response, or one streamed chunk
//   { name, arguments }          a single call object
//
// Beside the calls comes the content, the model's text with the calls taken out (call-content.ts):
// for text, the text less every call kept; for a message or response with structured calls, its
// text as it is; null when there is none.
//
// It never throws for what a model wrote: whatever it cannot read is a problem with the raw text.
// Bad options (an unknown format name, `tools` that are not tools) are a USAGE error up front.

function raw(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

export function parseToolCalls(input: unknown, options?: ParseOptions): ParseResult {
  const settings = checkParseOptions(options);
  const sink = newSink(settings.tools);
  let source: ContentSource = undefined;
  try {
    if (typeof input === 'string') {
      source = parseText(input, sink, settings);
    } else if (Array.isArray(input)) {
      source = assembleStream(input, sink, settings);
    } else if (isRecord(input)) {
      source = parseObject(input, sink, settings);
    } else {
      sink.problems.push(problem('NOT_MODEL_OUTPUT', `expected model output (text, a message or stream chunks), got ${input === null ? 'null' : typeof input}`, raw(input)));
    }
  } catch (error) {
    // A hostile input (a throwing getter, a revoked proxy) must not escape as an exception.
    sink.problems.push(problem('NOT_MODEL_OUTPUT', `could not read the model output: ${(error as Error)?.message ?? String(error)}`, raw(input)));
  }
  checkNames(sink);
  return { calls: assignIds(sink.calls), problems: sink.problems, content: contentOf(source, sink.calls) };
}

function parseObject(input: Record<string, unknown>, sink: CallSink, settings: ParseSettings): ContentSource {
  if (Array.isArray(input.choices)) {
    const choice = input.choices.find((c) => isRecord(c) && (c.index === undefined || c.index === 0));
    if (isRecord(choice) && isRecord(choice.message)) return parseMessage(choice.message, sink, settings);
    if (isRecord(choice) && isRecord(choice.delta)) return assembleStream([input], sink, settings);
    if (input.choices.length > 0) sink.problems.push(problem('NOT_MODEL_OUTPUT', 'the response has no first choice with a message or delta', raw(input)));
    return undefined;
  }
  if ('tool_calls' in input || 'function_call' in input || 'content' in input || 'role' in input) return parseMessage(input, sink, settings);
  if (!addCall(input, true, sink, {}, true)) {
    sink.problems.push(problem('NOT_MODEL_OUTPUT', 'not a message, a response, stream chunks or a tool call', raw(input)));
  }
  return undefined;
}
