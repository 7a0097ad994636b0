import type { EventListener, RunEvent } from '../../run-model/events.js';
import type { RunResult } from '../../run-model/result.js';
import type { ApprovalView, Decision } from '../../runs/approvals.js';
import type { RunDetail, RunSummary } from '../../runs/stored-result.js';
import type { RunFilter } from '../../store/types.js';
import type { ApproveCallback } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import type { ApprovalQuestion, ClientAnswer } from './elicit-approval.js';
import { isToolRun, type ToolRunTargets } from './tool-runs.js';

// An MCP call that may wait for a person, made a durable run (a chain's run, or a dangerous tool's
// one-step run, tool-runs.ts). Each approval the run asks for is put to the client when it can
// answer (elicitation) and decided with its answer, recorded as the client's; the call then goes
// on and ends with the run, as it does after a sleep of at most 20 s. When the run parks on
// anything else — no elicitation, no answer, an approval step for named approvers, a longer sleep,
// an event — the call ends at once with the run's waits, and the run goes on when they are over
// (the `mcp` process wakes runs), its outcome kept in the run store under its id.

/** What the MCP server needs of an engine to make calls durable runs. */
export interface McpRunTargets extends CallTargets, ToolRunTargets {
  run(chain: string, input: unknown, options: { readonly runId?: string; readonly approve?: ApproveCallback; readonly onEvent?: EventListener }): Promise<RunResult>;
  cancel(runId: string): Promise<boolean>;
  readonly approvals: {
    list(): Promise<ApprovalView[]>;
    decide(id: string, decision: Decision): Promise<ApprovalView>;
  };
  readonly runs: {
    list(filter?: RunFilter): Promise<RunSummary[]>;
    get(runId: string): Promise<RunDetail | undefined>;
  };
}

export function hasRuns(targets: CallTargets): targets is McpRunTargets {
  const t = targets as Partial<McpRunTargets>;
  return typeof t.run === 'function' && typeof t.addChain === 'function' && typeof t.approvals?.decide === 'function' && typeof t.runs?.get === 'function';
}

/** What a parked call waits for. */
export interface PendingWait {
  readonly id: string;
  readonly kind: 'sleep' | 'event' | 'approval';
  readonly step: string;
  readonly prompt?: string;
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  /** The event's name. */
  readonly name?: string;
  readonly until?: number;
}

/** A run that parks on nothing but sleeps ending this soon keeps the call open. */
export const SHORT_SLEEP_MS = 20_000;

export type CallEnd = { readonly kind: 'ended'; readonly result: RunResult } | { readonly kind: 'waiting'; readonly runId: string; readonly waits: readonly PendingWait[] };

export interface CallAsRunOptions {
  readonly runId: string;
  readonly approve: ApproveCallback;
  /** Puts an approval to the client; absent when the client cannot answer. */
  readonly ask?: (q: ApprovalQuestion) => Promise<ClientAnswer | undefined>;
  /** Who decides through the client (`mcp:<client name>`). */
  readonly by: string;
  /** The client cancelled the call: the run is cancelled too, unless the call ended already. */
  readonly signal?: AbortSignal;
}

export interface CallAsRun {
  /** When the call answers: the run's end, or what it waits for. */
  readonly end: Promise<CallEnd>;
  /** The run's end, whenever it comes (after the call answered, when it parked). */
  readonly done: Promise<RunResult>;
}

export function callAsRun(targets: McpRunTargets, chain: string, input: Record<string, unknown>, options: CallAsRunOptions): CallAsRun {
  const { runId, ask } = options;
  /** Per approval request: whether the client decided it. */
  const asked = new Map<string, Promise<boolean>>();
  const requested = new Map<string, PendingWait>();
  let settled = false;
  let settle!: (end: CallEnd) => void;
  const end = new Promise<CallEnd>((resolve) => (settle = resolve));
  const finish = (value: CallEnd): void => {
    if (settled) return;
    settled = true;
    options.signal?.removeEventListener('abort', onAbort);
    settle(value);
  };
  const onAbort = (): void => void targets.cancel(runId).catch(() => undefined);
  // Cancelled while it waited for a place (a listener added now would never be called): no run starts.
  if (options.signal?.aborted) {
    const result: RunResult = { run_id: runId, chain, status: 'cancelled', outputs: null, error: { code: 'ABORTED', message: `the call was cancelled before run ${runId} started` }, steps: {}, duration_ms: 0 };
    settle({ kind: 'ended', result });
    return { end, done: Promise.resolve(result) };
  }
  options.signal?.addEventListener('abort', onAbort, { once: true });

  async function decideByClient(q: ApprovalQuestion & { readonly id: string }): Promise<boolean> {
    try {
      if (q.tool === undefined) {
        // An approval step may name who decides it; the client is none of them.
        const view = (await targets.approvals.list()).find((a) => a.id === q.id);
        if (view?.approvers !== undefined) return false;
      }
      const answer = await ask!(q);
      if (answer === undefined) return false;
      await targets.approvals.decide(q.id, { approved: answer.approved, by: options.by, ...(answer.comment !== undefined ? { comment: answer.comment } : {}) });
      return true;
    } catch {
      // Decided elsewhere meanwhile (the run goes on with that decision), or the store failed.
      return !(await targets.approvals.list().catch(() => [])).some((a) => a.id === q.id);
    }
  }

  async function parked(waits: readonly PendingWait[]): Promise<void> {
    // A short sleep is waited out: the call answers when the run ends.
    if (waits.length > 0 && waits.every((w) => w.kind === 'sleep' && w.until !== undefined && w.until - Date.now() <= SHORT_SLEEP_MS)) return;
    const answers = waits.map((w) => (w.kind === 'approval' ? asked.get(w.id) : undefined));
    // Every wait is an approval the client is deciding: the run goes on once it has.
    if (answers.every((a) => a !== undefined) && (await Promise.all(answers)).every(Boolean)) return;
    finish({ kind: 'waiting', runId, waits });
  }

  let lastWaits: readonly PendingWait[] = [];
  const onEvent = (e: RunEvent): void => {
    if (settled) return;
    if (e.type === 'approval:requested') {
      const q = { id: e.id, chain: isToolRun(e.chain) ? '' : e.chain, step: e.step, prompt: e.prompt, ...(e.tool !== undefined ? { tool: e.tool, args: e.args ?? {} } : {}) };
      requested.set(e.id, { id: e.id, kind: 'approval', step: e.step, prompt: e.prompt, ...(e.tool !== undefined ? { tool: e.tool, args: e.args ?? {} } : {}), ...(e.until !== undefined ? { until: e.until } : {}) });
      if (ask !== undefined && !asked.has(e.id)) asked.set(e.id, decideByClient(q));
    } else if (e.type === 'run:waiting' && e.run_id === runId) {
      lastWaits = e.waits.map((w) => ({ ...w, ...requested.get(w.id) }));
      void parked(lastWaits);
    }
  };

  const failed = (error: unknown): RunResult => ({ run_id: runId, chain, status: 'failed', outputs: null, error: { code: 'TOOL_ERROR', message: (error as Error)?.message ?? String(error) }, steps: {}, duration_ms: 0 });
  const done = targets.run(chain, input, { runId, approve: options.approve, onEvent }).catch(failed);
  void done.then((result) => finish(result.status === 'waiting' ? { kind: 'waiting', runId, waits: lastWaits } : { kind: 'ended', result }));
  return { end, done };
}
