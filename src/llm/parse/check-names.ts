import type { KnownTools } from './known-tools.js';
import { problem, type CallSink, type ParseProblem, type PendingCall } from './types.js';

// With the offered tools known, a call to any other name is not a call: the model misspelled a
// tool, or invented one, or a sample in its prose looked like a call. It becomes an UNKNOWN_TOOL
// problem carrying the closest offered names, so the model can be told what it may call.

export function checkNames(sink: CallSink): void {
  const tools = sink.tools;
  if (tools === undefined) return;
  let kept = 0;
  for (const call of sink.calls) {
    if (tools.has(call.name)) sink.calls[kept++] = call;
    else sink.problems.push(unknownTool(call, tools));
  }
  sink.calls.length = kept;
}

/** The problem a call to a name that was not offered becomes (whole-text parse and stream alike). */
export function unknownTool(call: PendingCall, tools: KnownTools): ParseProblem {
  const suggestions = tools.closest(call.name);
  const hint = suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '; no tools were offered';
  return problem('UNKNOWN_TOOL', `call to '${call.name}', which is not an offered tool${hint}`, JSON.stringify({ name: call.name, arguments: call.arguments }), {
    id: call.id,
    name: call.name,
    format: call.format,
    at: call.at,
    suggestions,
  });
}
