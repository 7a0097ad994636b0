import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PendingWait } from './call-as-run.js';

// The answer to an MCP call whose run parked: an `isError` result with code RUN_WAITING (the call
// has not done its work yet, and a tool's output schema could not describe this), saying what it
// waits for, how a person decides an approval, and how the client gets the outcome later:
// `toolchain_run_result` with the run's id. For a callable without an output schema, the same as
// structured content: `{ error: { code, message }, run_id, waits }`.

export const RUN_RESULT_TOOL = 'toolchain_run_result';

/** A tool's arguments in the text, at most (all of them are in the structured content). */
const MAX_ARGS_CHARS = 500;

export function waitingResult(runId: string, waits: readonly PendingWait[], hasOutputSchema: boolean): CallToolResult {
  const message = waitingMessage(runId, waits);
  return {
    content: [{ type: 'text', text: `RUN_WAITING: ${message}` }],
    ...(hasOutputSchema ? {} : { structuredContent: { error: { code: 'RUN_WAITING', message }, run_id: runId, waits: waits.map(describeWait) } }),
    isError: true,
  };
}

function waitingMessage(runId: string, waits: readonly PendingWait[]): string {
  const approvals = waits.filter((w) => w.kind === 'approval');
  const lines = waits.length > 0 ? waits.map((w) => `- ${line(w)}`) : ['- nothing left for a person to decide: a sleep or an event, or it goes on in a moment'];
  const decide =
    approvals.length === 0
      ? ''
      : ` A person decides ${approvals.length === 1 ? 'it' : 'each'} with \`toolchain approvals approve ${approvals[0]!.id}\` (or \`toolchain approvals deny ${approvals[0]!.id}\`), or with POST /api/approvals/${approvals[0]!.id} {"decision": "approve"} to \`toolchain serve\` on the same run store.`;
  const head = approvals.length > 0 ? 'this call waits for a person\'s approval and has not done its work yet' : 'this call waits and has not finished yet';
  return `${head}:\n${lines.join('\n')}\n${decide.trimStart()}${decide ? ' ' : ''}It goes on by itself as run ${runId} once that is over; call ${RUN_RESULT_TOOL} with {"run_id": "${runId}"} for its outcome.`;
}

function line(w: PendingWait): string {
  if (w.kind === 'approval') {
    return `approval request ${w.id}: ${w.prompt ?? `step '${w.step}'`}${w.tool !== undefined ? ` Arguments: ${shortJson(w.args ?? {})}` : ''}${w.until !== undefined ? ` (denied unless decided by ${new Date(w.until).toISOString()})` : ''}`;
  }
  if (w.kind === 'event') return `event '${w.name ?? '?'}' (step '${w.step}')${w.until !== undefined ? `, until ${new Date(w.until).toISOString()}` : ''}`;
  return `a sleep (step '${w.step}')${w.until !== undefined ? ` until ${new Date(w.until).toISOString()}` : ''}`;
}

function shortJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.length <= MAX_ARGS_CHARS ? json : `${json.slice(0, MAX_ARGS_CHARS)}…`;
}

function describeWait(w: PendingWait): Record<string, unknown> {
  return {
    id: w.id,
    kind: w.kind,
    step: w.step,
    ...(w.prompt !== undefined ? { prompt: w.prompt } : {}),
    ...(w.tool !== undefined ? { tool: w.tool, args: w.args ?? {} } : {}),
    ...(w.name !== undefined ? { name: w.name } : {}),
    ...(w.until !== undefined ? { until: new Date(w.until).toISOString() } : {}),
  };
}
