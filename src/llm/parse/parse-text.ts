import type { ContentSource } from './call-content.js';
import { toArguments } from './call-shape.js';
import type { ToolCallFormat } from './format.js';
import { isPlaceholderName, isSchemaLike } from './not-a-call.js';
import { readFormats, type FormatsRead, type ReadCall, type ReadProblem } from './read-formats.js';
import { textPositions, type Positions } from './text-position.js';
import { problem, type CallSink, type ParseProblem, type PendingCall } from './types.js';

// Calls written in text, by models without native function calling, by servers that fell back
// to raw text when their own parser failed, or by a prompted text protocol: every registered
// format is tried (format-registry.ts), and what they found goes into the sink in text order —
// calls with their arguments read as JSON where a format left them as text, and problems with
// the format's name and the line and column where the call starts. The read is kept, so the
// content can be cut from it once the names are checked (call-content.ts).

export interface TextSettings {
  readonly formats: readonly ToolCallFormat[];
}

/** One found call as the sink takes it (at `at` in the message); a problem when its arguments are not an object. */
export function toPending(call: ReadCall, sink: Pick<CallSink, 'tools'>, at = call.start): PendingCall | ParseProblem | undefined {
  if (isPlaceholderName(call.name, sink.tools)) return undefined;
  const args = toArguments(call.arguments);
  if (!args.ok) {
    return problem('INVALID_ARGUMENTS', `call to '${call.name}': ${args.message}`, typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) ?? '', { id: call.id, name: call.name, format: call.format, at });
  }
  if (isSchemaLike(args.value, call.name, sink.tools)) return undefined;
  return { id: call.id, name: call.name, arguments: args.value, format: call.format, at };
}

/** A format's problem as the sink takes it: the format and the place are part of the message. */
export function toProblem(found: ReadProblem, text: string, position: Positions = textPositions(text)): ParseProblem {
  const { line, column } = position(found.start);
  const message = `${found.message} (${found.format}, line ${line} column ${column})`;
  return problem(found.code ?? 'UNREADABLE_CALL', message, found.raw ?? text.slice(found.start, found.end), { id: found.id, name: found.name, format: found.format, at: found.start });
}

/** Appends the calls and problems of a finished read to the sink, in text order. */
export function addRead(read: FormatsRead, text: string, sink: CallSink): void {
  const position = textPositions(text);
  let p = 0;
  for (const call of read.calls) {
    while (p < read.problems.length && read.problems[p]!.start < call.start) sink.problems.push(toProblem(read.problems[p++]!, text, position));
    const entry = toPending(call, sink);
    if (entry === undefined) continue;
    if ('code' in entry) sink.problems.push(entry);
    else sink.calls.push(entry);
  }
  while (p < read.problems.length) sink.problems.push(toProblem(read.problems[p++]!, text, position));
}

/** Appends every call and problem in `text` to `sink`; returns what the content is cut from once the names are checked. */
export function parseText(text: string, sink: CallSink, settings: TextSettings): ContentSource {
  const read = readFormats(text, settings.formats, { partial: false, atMessageStart: true, tools: sink.tools });
  addRead(read, text, sink);
  return { text, read };
}
