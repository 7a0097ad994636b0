import type { ChainGraph } from '../../src/graph/chain-graph.js';
import type { RunEvent } from '../../src/run-model/events.js';
import type { RunDetail, RunSummary } from '../../src/serve/run-service.js';
import type { ApprovalView } from '../../src/runs/approvals.js';
import type { TriggerUpdate, TriggerView } from '../../src/triggers/views.js';

// The server's API as the page uses it. Same origin; with a token the browser carries the
// cookie that /?token= set, so neither fetch nor EventSource needs a header.

export type { ApprovalView, ChainGraph, RunDetail, RunEvent, RunSummary, TriggerUpdate, TriggerView };

export interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

export interface ChainListItem {
  name: string;
  version?: string;
  description?: string;
  steps: number;
  inputs: JsonSchema;
}

export interface ChainDetail extends ChainListItem {
  graph: ChainGraph;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!res.ok) throw new ApiError(res.status, data.error?.code ?? `HTTP_${res.status}`, data.error?.message ?? res.statusText);
  return data as T;
}

export const api = {
  chains: () => call<{ chains: ChainListItem[] }>('GET', 'api/chains').then((r) => r.chains),
  chain: (name: string) => call<ChainDetail>('GET', `api/chains/${encodeURIComponent(name)}`),
  runs: (query: { status?: string; chain?: string; limit?: number }) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
    return call<{ runs: RunSummary[] }>('GET', `api/runs?${params}`).then((r) => r.runs);
  },
  run: (id: string) => call<RunDetail>('GET', `api/runs/${encodeURIComponent(id)}`),
  /** The run's input whole (the run's view leaves a large one out). */
  input: (id: string) => call<{ input: unknown }>('GET', `api/runs/${encodeURIComponent(id)}/input`).then((r) => r.input),
  start: (chain: string, input: unknown) => call<{ run_id: string }>('POST', 'api/runs', { chain, input }),
  cancel: (id: string) => call<RunSummary>('POST', `api/runs/${encodeURIComponent(id)}/cancel`),
  resume: (id: string) => call<{ run_id: string }>('POST', `api/runs/${encodeURIComponent(id)}/resume`),
  /** A new run of a run that ended: `from` and everything downstream of it run, the other steps keep their outputs. */
  rerun: (id: string, body: { from?: string; input?: Record<string, unknown> }) => call<{ run_id: string }>('POST', `api/runs/${encodeURIComponent(id)}/rerun`, body),
  /** Pending approval requests, oldest first; of one run with `run`. */
  approvals: (run?: string) => call<{ approvals: ApprovalView[] }>('GET', `api/approvals${run !== undefined ? `?run=${encodeURIComponent(run)}` : ''}`).then((r) => r.approvals),
  decide: (id: string, decision: 'approve' | 'deny', comment: string) =>
    call<ApprovalView>('POST', `api/approvals/${encodeURIComponent(id)}`, { decision, ...(comment.trim() !== '' ? { comment: comment.trim() } : {}) }),
  /** Every trigger of the loaded chains (of one chain with `chain`): next fire times, last run, paused or not. */
  triggers: (chain?: string) => call<{ triggers: TriggerView[] }>('GET', `api/triggers${chain !== undefined ? `?chain=${encodeURIComponent(chain)}` : ''}`).then((r) => r.triggers),
  /** `key`: `CHAIN#ID` (sent with its `#` encoded). The server records who pauses. */
  pauseTrigger: (key: string, reason: string) => call<{ triggers: TriggerUpdate[] }>('POST', `api/triggers/${encodeURIComponent(key)}/pause`, reason.trim() !== '' ? { reason: reason.trim() } : {}).then((r) => r.triggers),
  resumeTrigger: (key: string) => call<{ triggers: TriggerUpdate[] }>('POST', `api/triggers/${encodeURIComponent(key)}/resume`).then((r) => r.triggers),
};

/** What a wait is, for people: `approval of vault/open_vault`, `event payment.settled`, `sleep`. */
export function describeWaits(waits: RunSummary['waiting_for']): string {
  return (waits ?? []).map((w) => (w.kind === 'event' ? `event ${w.name ?? ''}` : w.kind === 'sleep' ? 'sleep' : `approval (step ${stepOf(w.step)})`)).join(', ');
}

/** The step a wait belongs to: its key without the attempt (`#N`) and a dangerous call's mark (`!`). */
export function stepOf(key: string): string {
  return key.replace(/!$/, '').replace(/#\d+$/, '');
}

/** Every event of a run (past, then live) until its run:finished; returns a function that stops listening. */
export function followRun(id: string, onEvent: (e: RunEvent) => void, onEnd: () => void): () => void {
  const source = new EventSource(`api/runs/${encodeURIComponent(id)}/events`);
  let over = false;
  const stop = (): void => {
    over = true;
    source.close();
  };
  const handle = (message: MessageEvent<string>): void => {
    const event = JSON.parse(message.data) as RunEvent;
    onEvent(event);
    if (event.type === 'run:finished' && event.parent === undefined) {
      stop();
      onEnd();
    }
  };
  for (const type of ['run:started', 'run:finished', 'step:started', 'step:retrying', 'step:succeeded', 'step:failed', 'step:skipped', 'agent:turn', 'agent:tool_call', 'step:waiting', 'step:round', 'run:waiting', 'run:woken', 'approval:requested', 'approval:decided']) {
    source.addEventListener(type, handle as EventListener);
  }
  // The stream ends after run:finished; without this EventSource would reconnect (and replay).
  source.onerror = () => {
    if (over) source.close();
  };
  return stop;
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatTime(epochMs: number): string {
  const d = new Date(epochMs);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}
