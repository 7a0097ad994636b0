import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunResult } from '../../run-model/result.js';
import type { JsonSchema } from '../../common/json.js';
import { DEFAULT_MAX_RESULT_CHARS, errorMessage, successMessage } from '../execute/tool-message.js';
import type { McpTool } from '../export/to-mcp.js';
import { toCallToolResult } from './call-result.js';
import type { McpRunTargets, PendingWait } from './call-as-run.js';
import { isToolRun } from './tool-runs.js';
import { RUN_RESULT_TOOL, waitingResult } from './waiting-result.js';

// What a call made a durable run answers once the run has ended (its outputs: a tool's result, a
// chain's outputs; or its error), and `toolchain_run_result`: the outcome, later, of a call that
// answered RUN_WAITING — what the run still waits for, or how it ended. It answers only runs
// started over MCP (their ids begin with `mcp-`): the run store may hold other people's runs.

export const MCP_RUN_PREFIX = 'mcp-';

/** A chain's failure is worded as a chain call's is (`chain 'x' failed at step 'y': …`); a tool run's is the tool's own. */
export function endedResult(result: { readonly chain: string; readonly status: string; readonly outputs: unknown; readonly error?: RunResult['error'] }, hasOutputSchema: boolean): CallToolResult {
  if (result.status === 'succeeded') return toCallToolResult(successMessage('', result.outputs, DEFAULT_MAX_RESULT_CHARS), hasOutputSchema);
  const error = result.error ?? { code: result.status === 'cancelled' ? 'ABORTED' : 'TOOL_ERROR', message: `the run ${result.status === 'cancelled' ? 'was cancelled' : 'failed'}` };
  const message = isToolRun(result.chain) ? error.message : `chain '${result.chain}' failed${error.step !== undefined ? ` at step '${error.step}'` : ''}: ${error.message}`;
  return toCallToolResult(errorMessage('', error.code, message, DEFAULT_MAX_RESULT_CHARS), hasOutputSchema);
}

const INPUT: JsonSchema = {
  type: 'object',
  properties: { run_id: { type: 'string', description: 'The run_id a call answered with when it had to wait (RUN_WAITING).' } },
  required: ['run_id'],
  additionalProperties: false,
};

export const runResultTool: McpTool = {
  name: RUN_RESULT_TOOL,
  title: 'toolchain: outcome of a waiting call',
  description:
    'The outcome of a call that answered RUN_WAITING (a dangerous tool or a chain that waited for an approval or something else): ' +
    'its result once it has run, its error (APPROVAL_DENIED when the approval was refused), or RUN_WAITING again while it still waits.',
  inputSchema: INPUT,
};

/** `running`: the runs this process runs now, by id; a call for one of them waits for its end. */
export async function runOutcome(targets: McpRunTargets, running: ReadonlyMap<string, Promise<RunResult>>, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
  const runId = args?.run_id;
  const keys = Object.keys(args ?? {}).filter((k) => k !== 'run_id');
  if (typeof runId !== 'string' || runId === '' || keys.length > 0) {
    return toCallToolResult(errorMessage('', 'VALIDATION_FAILED', `Invalid arguments for tool '${RUN_RESULT_TOOL}': it takes { "run_id": "<the id a waiting call answered with>" }`, DEFAULT_MAX_RESULT_CHARS));
  }
  const notFound = (): CallToolResult => toCallToolResult(errorMessage('', 'RUN_NOT_FOUND', `no call made over MCP has run id ${runId}`, DEFAULT_MAX_RESULT_CHARS));
  if (!runId.startsWith(MCP_RUN_PREFIX)) return notFound();
  let detail = await targets.runs.get(runId);
  if (detail === undefined) return notFound();
  const here = running.get(runId);
  if (detail.status === 'running' && here !== undefined) {
    await here;
    detail = (await targets.runs.get(runId)) ?? detail;
  }
  if (detail.status === 'running') return toCallToolResult(errorMessage('', 'RUN_IN_PROGRESS', `run ${runId} is running now (its wait is over); ask again in a moment`, DEFAULT_MAX_RESULT_CHARS));
  if (detail.status === 'waiting') {
    const waits: PendingWait[] = (await targets.approvals.list())
      .filter((a) => a.run_id === runId)
      .map((a) => ({ id: a.id, kind: 'approval', step: a.step, prompt: a.prompt, ...(a.tool !== undefined ? { tool: a.tool, args: a.args ?? {} } : {}), ...(a.until !== undefined ? { until: a.until } : {}) }));
    return waitingResult(runId, waits, false);
  }
  return endedResult(detail, false);
}
