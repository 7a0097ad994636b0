import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LogEntry } from '../../run-model/events.js';
import type { RunResult } from '../../run-model/result.js';
import { ToolchainError } from '../../common/errors.js';
import type { ApproveCallback } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import { executeToolCalls } from '../execute/execute-tool-calls.js';
import { toCallToolResult } from './call-result.js';
import { callAsRun, hasRuns, type McpRunTargets } from './call-as-run.js';
import { askClient, canElicit, clientDecider } from './elicit-approval.js';
import { currentToolList } from './list-signature.js';
import { planRun, servedTargets } from './plan-run.js';
import { endedResult, MCP_RUN_PREFIX, runOutcome, runResultTool } from './run-outcome.js';
import { isToolRun, restoreToolRun } from './tool-runs.js';
import { RUN_RESULT_TOOL, waitingResult } from './waiting-result.js';
import { importModule } from '../../common/import-module.js';

// Every tool and chain served over MCP. `tools/list` is the MCP export of the engine at
// the moment of asking (toMcpTools); `tools/call` goes through executeToolCalls, so a client gets
// the registry's validation, timeouts, approval and circuit breakers, and every failure as an
// `isError` result in words a model can act on — a call never becomes a protocol error. A client's
// cancellation aborts the call. `refresh()` is called on hot reload and tells clients when the
// list they would get has changed.
//
// Calls that need a person (plan-run.ts: a dangerous tool whose `approve` answers 'wait', a chain
// with approval steps, dangerous calls or other waits), when the engine keeps runs (an Engine):
// each is a durable run (call-as-run.ts). Its approvals are put to the client when it declared
// `elicitation`; otherwise the call answers RUN_WAITING with the request's id, the run goes on
// once a person decides, and `toolchain_run_result` (listed while something served may wait)
// gives the outcome.
//
// A client may send many calls without waiting for answers; the SDK hands each to us at once. At
// most `concurrency` of them work at a time (p-limit, default 8, the same as one batch of a
// model's calls); the rest wait their turn in the order they came. Asking for a waiting call's
// result (toolchain_run_result) is not work and takes no place.

export interface McpServerOptions {
  /**
   * Asked before each call of a dangerous tool: `true` runs it, `false` refuses it
   * (APPROVAL_DENIED), `'wait'` makes it an approval request — put to the client when it supports
   * elicitation, else left for a person (`toolchain approvals`). Default: `'wait'` for an engine
   * (which keeps runs), a refusal for other call targets.
   */
  readonly approve?: ApproveCallback;
  /** Tools' `ctx.log()` lines. */
  readonly log?: (entry: LogEntry) => void;
  /** Server name and version announced in `initialize`. */
  readonly name?: string;
  readonly version?: string;
  /** Calls worked on at once (default 8); the others wait for a place, in the order they came. */
  readonly concurrency?: number;
}

/** Calls a server works on at once, unless told otherwise. */
export const DEFAULT_MCP_CONCURRENCY = 8;

export interface ToolchainMcpServer {
  readonly server: Server;
  /** Compares the tool list with the last one announced; sends `notifications/tools/list_changed` when it differs. Resolves whether or not it sent. */
  refresh(): Promise<boolean>;
}

/**
 * The SDK is imported here, when a server is made, not when this module loads: the CLI bundles
 * every command, and loading the SDK would cost every other command's start-up.
 */
export async function createMcpServer(engine: CallTargets, options: McpServerOptions = {}): Promise<ToolchainMcpServer> {
  const limit = pLimit(checkedConcurrency(options.concurrency));
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    importModule<typeof import('@modelcontextprotocol/sdk/server/index.js')>('@modelcontextprotocol/sdk/server/index.js'),
    importModule<typeof import('@modelcontextprotocol/sdk/types.js')>('@modelcontextprotocol/sdk/types.js'),
  ]);
  const server = new Server(
    { name: options.name ?? 'toolchain', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: 'Tools and chains of a toolchain engine. A chain is a tool whose parameters are its inputs. Invalid arguments come back as an error result that says which field is wrong and what it expects.',
    },
  );
  const runs = hasRuns(engine) ? engine : undefined;
  const approve: ApproveCallback | undefined = options.approve ?? (runs ? () => 'wait' : undefined);
  const served = servedTargets(engine);
  /** The tool list, with toolchain_run_result while something served may wait (and no callable has its name). */
  const listed = (): ReturnType<typeof currentToolList> => {
    const list = currentToolList(served);
    if (runs === undefined || list.tools.some((t) => t.name === RUN_RESULT_TOOL) || !mayWait(served)) return list;
    const tools = [...list.tools, runResultTool];
    return { tools, signature: JSON.stringify(tools) };
  };
  if (runs) await restoreToolRuns(runs, options.log);
  let announced = listed().signature;
  let calls = 0;
  /** Names listed with an outputSchema in the last answer to tools/list: what the client checks results against. */
  let withOutput = new Set<string>();
  /** Runs of calls made here that have not ended, by id: toolchain_run_result waits for one that runs. */
  const running = new Map<string, Promise<RunResult>>();

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const list = listed();
    announced = list.signature;
    withOutput = new Set(list.tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name));
    return { tools: list.tools };
  });

  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    const id = `mcp_${++calls}`;
    if (runs && name === RUN_RESULT_TOOL && currentToolList(served).tools.every((t) => t.name !== RUN_RESULT_TOOL)) return runOutcome(runs, running, args);
    return limit(() => work(id, name, args, extra));
  });

  /** One call, once it has a place: a durable run when it may need a person, else one call through executeToolCalls. */
  async function work(id: string, name: string, args: Record<string, unknown> | undefined, extra: CallExtra): Promise<CallToolResult> {
    let callApprove = approve;
    if (runs) {
      const runId = `${MCP_RUN_PREFIX}${randomUUID()}`;
      const plan = await planRun(runs, served, name, args, { id, runId, approve });
      if (plan.kind === 'decided') callApprove = () => plan.approved;
      else if (plan.kind === 'run') {
        const call = callAsRun(runs, plan.chain, plan.input, {
          runId,
          approve: approve ?? (() => 'wait'),
          ...(canElicit(server) ? { ask: (q) => askClient(server, q, { relatedRequestId: extra.requestId, signal: extra.signal }) } : {}),
          by: clientDecider(server),
          signal: extra.signal,
        });
        running.set(runId, call.done);
        void call.done.then(() => running.delete(runId));
        const end = await call.end;
        return end.kind === 'ended' ? endedResult(end.result, withOutput.has(name)) : waitingResult(end.runId, end.waits, withOutput.has(name));
      }
    }
    const [answer] = await executeToolCalls(served, [{ id, name, arguments: args ?? {} }], {
      signal: extra.signal,
      ...(callApprove ? { approve: callApprove } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    return toCallToolResult(answer!, withOutput.has(name));
  }

  return {
    server,
    async refresh() {
      const { signature } = listed();
      if (signature === announced) return false;
      announced = signature;
      // Before a client has connected there is nobody to tell; it will list when it connects.
      if (server.transport === undefined) return false;
      await server.sendToolListChanged();
      return true;
    },
  };
}

/** What the SDK tells a call handler of its request: the client's cancellation and the request's id. */
interface CallExtra {
  readonly signal: AbortSignal;
  readonly requestId: string | number;
}

function checkedConcurrency(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MCP_CONCURRENCY;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new ToolchainError('USAGE', `option 'concurrency' must be a whole number of at least 1, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/** Something served may have to wait for a person: a dangerous tool, or a chain that may wait or call one. */
function mayWait(served: CallTargets): boolean {
  const tools = served.tools();
  return tools.tools().some((t) => t.dangerous) || served.chains().some((c) => c.mayWait || c.tools.some((t) => tools.get(t)?.dangerous === true));
}

/** The one-step chains of dangerous calls an earlier process left waiting: made again, so that their runs can be woken here. */
async function restoreToolRuns(runs: McpRunTargets, log: ((entry: LogEntry) => void) | undefined): Promise<void> {
  try {
    for (const run of await runs.runs.list({ status: 'waiting', limit: 1_000 })) {
      if (isToolRun(run.chain) && runs.chain(run.chain) === undefined) restoreToolRun(runs, (await runs.runs.get(run.run_id))?.input);
    }
  } catch (error) {
    log?.({ timestamp: Date.now(), run_id: '', step: '', attempt: 0, message: `could not look for waiting MCP calls: ${(error as Error)?.message ?? String(error)}` });
  }
}
