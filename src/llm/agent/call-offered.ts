import { executeToolCalls } from '../execute/execute-tool-calls.js';
import type { ToolCallReport } from '../execute/execute-options.js';
import type { ToolMessage } from '../execute/tool-message.js';
import type { OfferedTools } from './offer-tools.js';
import type { AgentHost, AgentToolCall } from './types.js';
import type { WireToolCall } from './wire.js';

// One call the model asked for, answered through executeToolCalls (validation with the registry's
// wording, approval, the tool's timeout, chains as runs): always a tool message, `is_error` when it
// failed, never a throw. Each call is its own batch so that it has its own event the moment it
// finishes; the calls of a turn still run concurrently (the loop starts them all at once).

export async function callOffered(call: WireToolCall, turn: number, offered: OfferedTools, host: AgentHost): Promise<ToolMessage> {
  const began = host.now();
  let report: ToolCallReport | undefined;
  const [message] = await executeToolCalls(offered.engine, [{ id: call.id, name: call.function.name, arguments: call.function.arguments }], {
    signal: host.signal,
    ...(host.approve ? { approve: host.approve } : {}),
    runId: host.runId,
    log: (entry) => host.log(entry),
    onCall: (r) => (report = r),
  });
  const answer = message!;
  const event: AgentToolCall = {
    turn,
    tool_call_id: answer.tool_call_id,
    name: call.function.name,
    ...(report?.target ? { target: report.target } : {}),
    arguments: parsedOrRaw(call.function.arguments),
    is_error: answer.is_error,
    content: answer.content,
    duration_ms: host.now() - began,
  };
  host.onToolCall(event);
  return answer;
}

function parsedOrRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
