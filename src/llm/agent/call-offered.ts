import type { AgentToolCall } from '../../run-model/events.js';
import { executeToolCalls } from '../execute/execute-tool-calls.js';
import type { ToolCallReport } from '../execute/execute-options.js';
import type { ToolMessage } from '../execute/tool-message.js';
import type { OfferedTools } from './offer-tools.js';
import type { AgentHost } from './types.js';
import type { WireToolCall } from './wire.js';

// One call the model asked for, answered through executeToolCalls — the call unit, on the run's
// clock and random source, with the registry's wording, approval and the tool's timeout, chains as
// runs — always a tool message, `is_error` when it failed, never a throw. Each call is its own
// batch so that its step events and its answer come the moment it finishes; the calls of a turn
// still run concurrently (the loop starts them all at once).

export async function callOffered(call: WireToolCall, turn: number, offered: OfferedTools, host: AgentHost): Promise<ToolMessage> {
  const began = host.clock.now();
  let report: ToolCallReport | undefined;
  const [message] = await executeToolCalls(offered.targets, [{ id: call.id, name: call.function.name, arguments: call.function.arguments }], {
    signal: host.signal,
    ...(host.approve ? { approve: host.approve } : {}),
    ...(host.waits ? { waits: host.waits, waitKey: host.waitKey } : {}),
    runId: host.runId,
    clock: host.clock,
    random: host.random,
    log: (entry) => host.log(entry),
    watch: ({ id, name }) => host.toolCall({ id, name, turn }),
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
    duration_ms: host.clock.now() - began,
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
