import type { ChainPlan } from '../compiler/plan.js';
import type { HandlerPhase } from '../run-model/result.js';
import type { Engine } from '../engine/types.js';
import type { RunEvent, WaitSummary } from '../run-model/events.js';
import { describeWait, waitSummary } from '../runs/run-waits.js';
import type { RunDetail as StoredDetail } from '../runs/stored-result.js';
import { RunView } from './run-view.js';
import { withOrigin } from './run-origin.js';
import type { RunDetail } from './run-service.js';

// A run this server did not start — started by the CLI, another server, a worker — is known only
// from the run store: its step results, not its events. They are turned back into the events
// they stand for (run:started, each step's started and end, run:finished), so the inspector and
// the SSE route treat every run alike. Steps of sub-chains (`a›b`) come as steps of their own.

const POLL_MS = 500;

/** The events a stored run's records stand for, in recording order; `plan` gives steps their index. */
export function storedEvents(detail: StoredDetail, plan?: ChainPlan): RunEvent[] {
  const base = { run_id: detail.run_id, chain: detail.chain };
  const events: RunEvent[] = [{ type: 'run:started', ...base, timestamp: detail.started_at, input: detail.input }];
  const indexOf = new Map(plan?.steps.map((s) => [s.name, s.index]));
  let extra = plan?.steps.length ?? 0;
  for (const [step, s] of Object.entries(detail.steps)) {
    if (s.status === 'pending') continue;
    const started_at = s.started_at ?? detail.started_at;
    // A step of failure handling has its place in its own list (a compensation: 0).
    const phase = s.phase;
    const index = phase !== undefined ? handlerIndex(plan, phase, step) : (indexOf.get(step) ?? extra++);
    const end = { ...base, timestamp: started_at + s.duration_ms, step, index, attempts: s.attempts, started_at, duration_ms: s.duration_ms, ...(phase !== undefined ? { phase } : {}) };

    // What the step did before the run was resumed, each earlier execution's attempts as one bar.
    for (const e of s.earlier ?? []) {
      const at = { ...base, timestamp: e.started_at + e.duration_ms, step, index, attempts: e.attempts, started_at: e.started_at, duration_ms: e.duration_ms };
      if (e.status === 'skipped') events.push({ type: 'step:skipped', ...at, status: 'skipped', attempt: 0, reason: 'dependency' });
      else {
        events.push({ type: 'step:started', ...base, timestamp: e.started_at, step, index, attempt: 1 });
        events.push({ type: 'step:failed', ...at, status: 'failed', attempt: Math.max(1, e.attempts), error: e.error ?? { code: 'TOOL_ERROR', message: '' } });
      }
    }
    const earlier = s.earlier?.reduce((n, e) => n + e.attempts, 0) ?? 0;
    end.attempts = s.attempts - earlier;
    if (s.status === 'skipped') {
      events.push({ type: 'step:skipped', ...end, status: 'skipped', attempt: 0, reason: 'when' });
      continue;
    }
    events.push({ type: 'step:started', ...base, timestamp: started_at, step, index, ...(phase !== undefined ? { phase } : {}), attempt: 1 });
    // At work (or when its owner died): started, not ended.
    if (s.status === 'running' || s.status === 'interrupted') continue;
    if (s.status === 'succeeded') events.push({ type: 'step:succeeded', ...end, status: 'succeeded', attempt: end.attempts, output: s.output });
    else events.push({ type: 'step:failed', ...end, status: 'failed', attempt: Math.max(1, end.attempts), error: s.error ?? { code: 'TOOL_ERROR', message: '' }, ...(s.output !== undefined ? { output: s.output } : {}) });
  }
  // A waiting run has not finished: what it waits for comes from its open waits (waitingEvents).
  if (detail.status !== 'running' && detail.status !== 'waiting') {
    events.push({
      type: 'run:finished',
      ...base,
      timestamp: detail.finished_at ?? detail.started_at + detail.duration_ms,
      status: detail.status === 'succeeded' || detail.status === 'compensation_failed' ? detail.status : 'failed',
      duration_ms: detail.duration_ms,
      outputs: detail.outputs,
      ...(detail.error ? { error: detail.error } : {}),
    });
  }
  return events;
}

/** A handler step's place in its list, by name (-1 when the plan does not have it, or it is a compensation's one step: 0). */
function handlerIndex(plan: ChainPlan | undefined, phase: HandlerPhase, step: string): number {
  if (phase === 'compensate') return 0;
  const list = phase === 'on_failure' ? plan?.handlers?.onFailure : plan?.handlers?.finally;
  return list?.steps.findIndex((s) => s.name === step) ?? -1;
}

/** The step key a wait belongs to: its key without the attempt (`#N`) and the dangerous call's mark (`!`). */
export function waitStep(key: string): string {
  return key.replace(/!$/, '').replace(/#\d+$/, '');
}

/** A stored run's open waits as a run's events: each waiting step started when its wait opened, then `step:waiting`, then `run:waiting`. */
export async function waitingEvents(engine: Engine, detail: Pick<StoredDetail, 'run_id' | 'chain' | 'status'>, plan?: ChainPlan): Promise<RunEvent[]> {
  if (detail.status !== 'waiting') return [];
  const [waits, wakeAt] = await Promise.all([engine.runs.waits({ run_id: detail.run_id, open: true }), engine.runs.wakeAt(detail.run_id)]);
  const base = { run_id: detail.run_id, chain: detail.chain };
  const indexOf = new Map(plan?.steps.map((s) => [s.name, s.index]));
  const events: RunEvent[] = [];
  const summaries: WaitSummary[] = [];
  for (const w of waits) {
    const step = waitStep(w.key);
    const index = indexOf.get(step) ?? -1;
    events.push({ type: 'step:started', ...base, timestamp: w.created_at, step, index, attempt: 1 });
    events.push({ type: 'step:waiting', ...base, timestamp: w.created_at, step, index, waiting_for: describeWait(w) });
    summaries.push(waitSummary(w));
  }
  const last = waits.reduce((at, w) => Math.max(at, w.created_at), 0);
  events.push({ type: 'run:waiting', ...base, timestamp: last, waits: summaries, wake_at: wakeAt ?? null });
  return events;
}

/** `GET /api/runs/ID` for a stored run: its records folded by the same RunView as live events. */
export async function storedRunDetail(engine: Engine, runId: string): Promise<RunDetail | undefined> {
  const stored = await engine.runs.get(runId);
  if (stored === undefined) return undefined;
  const plan = engine.chain(stored.chain);
  const view = new RunView(stored.run_id, stored.chain, stored.input, stored.started_at, (name) => engine.chain(name));
  for (const e of [...storedEvents(stored, plan), ...(await waitingEvents(engine, stored, plan))]) view.apply(e);
  if (stored.status === 'cancelled') view.status = 'cancelled';
  if (stored.interrupted) view.interruptedAfter(stored.duration_ms);
  for (const at of stored.resumes) view.resumedAt(at);
  return withOrigin(view.detail(), stored);
}

/** The events of a stored run: the past ones, then — while it runs elsewhere, or waits — new ones as the store records them. */
export async function storedEventStream(engine: Engine, runId: string): Promise<AsyncIterable<RunEvent> | undefined> {
  const first = await engine.runs.get(runId);
  if (first === undefined) return undefined;
  return {
    async *[Symbol.asyncIterator]() {
      // Each event once, known by its kind, its step and how many of that kind the step had
      // before it (a resumed step starts again): between two reads a step at work may end, and
      // one recorded after another that started later moves ahead of it in the records.
      const sent = new Set<string>();
      let waited = false;
      for (let detail: StoredDetail | undefined = first; detail !== undefined; ) {
        // Seen waiting, now not: it was woken (here or elsewhere) since the last read.
        if (waited && detail.status !== 'waiting') {
          yield { type: 'run:woken', run_id: detail.run_id, chain: detail.chain, timestamp: Date.now() };
          // When it parks again, that is news again.
          for (const identity of sent) if (identity.startsWith('run:waiting') || identity.startsWith('step:waiting')) sent.delete(identity);
        }
        waited = detail.status === 'waiting';
        const seen = new Map<string, number>();
        const plan = engine.chain(detail.chain);
        for (const e of [...storedEvents(detail, plan), ...(await waitingEvents(engine, detail, plan))]) {
          const kind = 'step' in e ? `${e.type} ${e.step}` : e.type;
          const nth = (seen.get(kind) ?? 0) + 1;
          seen.set(kind, nth);
          const identity = `${kind} ${nth}`;
          if (sent.has(identity)) continue;
          sent.add(identity);
          yield e;
        }
        if (detail.status !== 'running' && detail.status !== 'waiting') return;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
        detail = await engine.runs.get(runId);
      }
    },
  };
}
