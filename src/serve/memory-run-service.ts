import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine/types.js';
import type { RunOptions } from '../executor/index.js';
import type { RunEvent } from '../run-model/events.js';
import type { RunResult } from '../run-model/result.js';
import type { ApproveCallback } from '../registry/types.js';
import { EventFeed } from './event-feed.js';
import type { TappedObserver } from './observer-tap.js';
import { RunView } from './run-view.js';
import { Gauge } from './server-limits.js';
import { jsonEqual } from '../expr/json-equal.js';
import { ServiceError, type ListQuery, type RunDetail, type RunService, type RunSummary, type StartOptions, type StartOutcome, type StepDetail } from './run-service.js';
import { resumeQueued, submitQueued } from './queued-starts.js';
import { storedEvents, storedEventStream, storedRunDetail, waitingEvents } from './stored-events.js';
import type { RunDetail as StoredDetail, RunSummary as StoredSummary } from '../runs/stored-result.js';
import type { RerunRequest } from '../runs/rerun.js';
import { isRecord } from '../common/json.js';
import { withOrigin } from './run-origin.js';

// The RunService of a server over one engine. The runs this server starts (and resumes) are
// followed event by event, the newest `maxRuns` kept in memory (finished runs are dropped oldest
// first; running ones never): their views have every attempt and their event streams are live.
// Every other run — older, or started by the CLI, another server or a worker — comes from the
// engine's run store (stored-events.ts), as do the list and cancellations of runs elsewhere.
// A run that waits (a sleep, an event, a decision) is started to hold nothing while it waits: its
// execution here ends when it parks, and the engine's waker continues it later with the engine's
// own options. Its later events then come through the engine's tapped observer (observer-tap.ts)
// to the same view and event stream; without a tap, a parked run is left to the store.

export interface MemoryRunServiceOptions {
  /** Every event of every run goes here too (metrics, logs, traces). */
  readonly onEvent?: (event: RunEvent) => void;
  /** Dangerous tools: `true` allows the call, 'wait' makes it an approval request, anything else refuses it (APPROVAL_DENIED). */
  readonly approve?: ApproveCallback;
  /** Every event of the engine's runs, those its waker continues included: how a woken run's events reach its view. */
  readonly tap?: TappedObserver;
  /** Finished runs kept (default 1,000). */
  readonly maxRuns?: number;
  /** Runs this service executes that have not finished, at most (default: no cap); more are refused with 429. */
  readonly maxRunsInFlight?: number;
  /** The Retry-After of that refusal, in seconds (default 5). */
  readonly retryAfterS?: number;
}

/** Codes with which a run fails before any step ran because of the request, and their HTTP status. */
const REQUEST_CODES: ReadonlyMap<string, 400 | 404 | 409> = new Map([
  ['CHAIN_NOT_FOUND', 400],
  ['INPUT_INVALID', 400],
  ['RUN_NOT_FOUND', 404],
  ['RUN_IN_PROGRESS', 409],
  ['RUN_ID_CONFLICT', 409],
  ['CHAIN_CHANGED', 409],
  ['RUN_NOT_FINISHED', 409],
  ['STEP_NOT_FOUND', 400],
  ['RERUN_INPUT_READ', 409],
]);

interface Resumed {
  readonly seed: readonly RunEvent[];
  readonly startedAt: number;
  readonly resumes: readonly number[];
}

interface Entry {
  readonly view: RunView;
  readonly feed: EventFeed;
  readonly abort: AbortController;
  readonly done: Promise<RunResult>;
  /** The execution this service started is at work (not parked, not ended). */
  live: boolean;
  /** What that execution resolved with: the run's end, or its parking (status `waiting`). */
  result?: RunResult;
}

export function createMemoryRunService(engine: Engine, options: MemoryRunServiceOptions = {}): RunService {
  const maxRuns = options.maxRuns ?? 1000;
  const entries = new Map<string, Entry>();
  const observe = options.onEvent;
  const approve: ApproveCallback = options.approve ?? (() => false);
  let closing = false;
  const inFlight = new Gauge(options.maxRunsInFlight ?? Number.MAX_SAFE_INTEGER);

  function prune(): void {
    if (entries.size <= maxRuns) return;
    // A Map iterates in insertion order: oldest first. A parked run dropped here is read from the store.
    for (const [id, entry] of entries) {
      if (entries.size <= maxRuns) break;
      if (!entry.live && entry.view.status !== 'running') drop(id);
    }
  }

  /** Sub-chain run id → the run this service keeps it under. */
  const owners = new Map<string, string>();
  const ownerOf = (e: RunEvent): string => {
    if (e.parent === undefined) return e.run_id;
    const top = owners.get(e.run_id) ?? owners.get(e.parent.run_id) ?? e.parent.run_id;
    if (e.type === 'run:started') owners.set(e.run_id, top);
    return top;
  };
  function drop(id: string): void {
    entries.delete(id);
    for (const [child, top] of owners) if (top === id) owners.delete(child);
  }

  // Events of a kept run that its own execution here does not send: the run woken by the engine's
  // waker, and decisions on its approval requests (told only to the engine's observer).
  options.tap?.listen((e) => {
    const entry = entries.get(ownerOf(e));
    if (entry === undefined || (entry.live && e.type !== 'approval:decided')) return;
    entry.view.apply(e);
    entry.feed.push(e);
  });

  /**
   * `resumed`: the run taken up again, with what the store knows of it (its steps' events, its
   * first start, its earlier resumes). `launch`: how the engine starts it, when neither a run nor
   * a resume does (a re-run).
   */
  async function start(chain: string, input: unknown, opts: StartOptions, resumeId?: string, resumed?: Resumed, launch?: (runOptions: RunOptions & { untilWaiting: true }) => Promise<RunResult>): Promise<StartOutcome> {
    if (closing) throw new ServiceError(503, 'SHUTTING_DOWN', 'the server is shutting down and takes no new runs');
    // With a queue the workers execute it; the server reads it from the store like any run elsewhere.
    if (engine.queued) {
      const counted = { gauge: inFlight, retryAfterS: options.retryAfterS ?? 5 };
      return resumeId !== undefined ? resumeQueued(engine, resumeId, counted) : submitQueued(engine, chain, input, opts.runId, opts.wait === true, counted);
    }
    const known = opts.runId ?? resumeId;
    if (known !== undefined) {
      const existing = entries.get(known);
      // A run id is an idempotency key.
      if (existing?.live === true) throw new ServiceError(409, 'RUN_IN_PROGRESS', `run '${known}' is still running`);
      const stored = existing ? undefined : await engine.runs.get(known);
      if (resumeId === undefined && (existing?.result !== undefined || (stored !== undefined && stored.status !== 'running'))) {
        // The run kept here answers only the same request; any other goes to the store, which refuses it.
        const same = existing?.result !== undefined && existing.view.chain === chain && jsonEqual(existing.view.input ?? {}, input ?? {});
        const result = same ? existing.result! : await engine.run(chain, input, { runId: known, untilWaiting: true });
        if (result.error?.code === 'RUN_ID_CONFLICT') throw new ServiceError(409, result.error.code, result.error.message);
        return opts.wait ? { run_id: known, result } : { run_id: known };
      }
      if (resumeId !== undefined && stored === undefined && existing === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${known}'`);
    }
    // Taken before the run starts, given back when it ends, refused or not.
    if (!inFlight.take()) {
      throw new ServiceError(429, 'TOO_MANY_RUNS', `this server has ${inFlight.max} runs in flight, its limit; try again when some have finished`, options.retryAfterS ?? 5);
    }
    const id = known ?? randomUUID();
    const abort = new AbortController();
    const view = new RunView(id, chain, input, resumed?.startedAt ?? Date.now(), (name) => engine.chain(name));
    // One history: a resumed run keeps its first start, its earlier resumes, and marks this one.
    for (const at of resumed?.resumes ?? []) view.resumedAt(at);
    if (resumed !== undefined) view.resumedAt(Date.now());
    let follow!: (run: Promise<RunResult>) => void;
    const entry: Entry = { view, feed: new EventFeed(id), abort, live: true, done: new Promise<RunResult>((resolve) => (follow = resolve)) };
    // Events wait until the run is known to be a run: its first step moved, or it ended. A
    // request refused before any step (an unknown chain, bad input, a run id in use) leaves no
    // trace — in the list, or in the metrics (an unknown chain name must not become a label).
    const held: RunEvent[] = [];
    let accepted = false;
    let refused = false;
    // A resumed run's recorded steps come from the store: its successes do not run again (no
    // events), and what its failed steps did before stays on the timeline.
    for (const e of resumed?.seed ?? []) view.apply(e), entry.feed.push(e);
    let decide!: (refusal: ServiceError | undefined) => void;
    const decided = new Promise<ServiceError | undefined>((resolve) => (decide = resolve));
    const deliver = (e: RunEvent): void => {
      observe?.(e);
      ownerOf(e);
      view.apply(e);
      entry.feed.push(e);
    };
    const accept = (): void => {
      if (accepted || refused) return;
      accepted = true;
      entries.set(id, entry);
      for (const e of held.splice(0)) deliver(e);
      decide(undefined);
    };
    const onEvent = (e: RunEvent): void => {
      if (accepted) return deliver(e);
      held.push(e);
      if (e.type.startsWith('step:')) return accept();
      if (e.type !== 'run:finished' || e.run_id !== id) return;
      const status = e.error && REQUEST_CODES.get(e.error.code);
      if (!status) return accept();
      refused = true;
      decide(new ServiceError(status, e.error!.code, e.error!.message));
    };
    // Until it parks: a waiting run holds no slot, no promise, no request here while it waits.
    const runOptions: RunOptions & { untilWaiting: true } = { signal: abort.signal, onEvent, approve, runId: id, untilWaiting: true };
    const done = launch !== undefined ? launch(runOptions) : resumeId !== undefined ? engine.resume(resumeId, runOptions) : engine.run(chain, input, runOptions);
    follow(done);
    void done.then(
      () => inFlight.give(),
      () => inFlight.give(),
    );
    // A run answered from the store without events (it finished meanwhile) is accepted as it is.
    void done.then(accept, accept);
    const refusal = await decided;
    if (refusal) throw refusal;
    const settled = done.then((result) => {
      entry.result = result;
      entry.live = false;
      // Nothing here hears a woken run without a tap: the store answers for it from now on.
      if (result.status === 'waiting' && options.tap === undefined && entries.get(id) === entry) {
        drop(id);
        entry.feed.end();
      }
      prune();
      return result;
    });
    prune();
    if (!opts.wait) {
      settled.catch(() => undefined);
      return { run_id: id };
    }
    return { run_id: id, result: await settled };
  }

  return {
    start,
    async list(query: ListQuery): Promise<RunSummary[]> {
      const stored = await engine.runs.list({ limit: query.limit, ...(query.status ? { status: query.status } : {}), ...(query.chain ? { chain: query.chain } : {}), ...(query.onCorrupt ? { onCorrupt: query.onCorrupt } : {}) });
      return Promise.all(stored.map(async (r) => entries.get(r.run_id)?.view.summary() ?? withWaits(storedSummary(r), await waitingEvents(engine, r))));
    },
    async get(runId: string): Promise<RunDetail | undefined> {
      const entry = entries.get(runId);
      if (entry === undefined) return storedRunDetail(engine, runId);
      const stored = await engine.runs.get(runId).catch(() => undefined);
      return withOrigin(withElements(entry.view.detail(), stored), stored);
    },
    async events(runId: string) {
      return entries.get(runId)?.feed.read() ?? storedEventStream(engine, runId);
    },
    async cancel(runId: string): Promise<RunSummary> {
      const entry = entries.get(runId);
      if (entry === undefined) {
        // A run elsewhere: asked to stop through the store; its owner stops it.
        const before = await storedRunDetail(engine, runId);
        if (before === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}'`);
        if (before.status !== 'running' && before.status !== 'waiting') throw new ServiceError(409, 'RUN_FINISHED', `run '${runId}' has already finished (${before.status})`);
        await engine.cancel(runId);
        // A waiting run ends cancelled at once; one at work elsewhere stops when its owner sees the request.
        return before.status === 'waiting' ? ((await storedRunDetail(engine, runId)) ?? before) : { ...before, status: 'running' };
      }
      const status = entry.view.status;
      if (status !== 'running' && status !== 'waiting') throw new ServiceError(409, 'RUN_FINISHED', `run '${runId}' has already finished (${status})`);
      entry.view.cancelRequested = true;
      if (entry.live) {
        entry.abort.abort();
        await entry.done;
        return entry.view.summary();
      }
      // Parked, or woken by the engine's waker: stopped through the engine; a parked run ends at
      // once, and its run:finished reaches the view through the tap.
      await engine.cancel(runId);
      return entry.view.summary();
    },
    async resume(runId: string): Promise<StartOutcome> {
      const stored = await engine.runs.get(runId);
      if (stored === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}'`);
      if (stored.status === 'waiting') throw new ServiceError(409, 'RUN_WAITING', `run '${runId}' is waiting; it goes on by itself when its wait is over (an event, a decision, its time)`);
      // Steps at work when the run stopped have no record: they start again, from nothing.
      const seed = storedEvents(stored, engine.chain(stored.chain)).filter((e) => 'step' in e && stored.steps[e.step]?.status !== 'running' && stored.steps[e.step]?.status !== 'interrupted');
      entries.delete(runId);
      return start(stored.chain, stored.input, { wait: false }, runId, { seed, startedAt: stored.started_at, resumes: stored.resumes });
    },
    async rerun(runId: string, request: RerunRequest): Promise<StartOutcome> {
      if (engine.queued) throw new ServiceError(400, 'USAGE', 'this server hands its runs to a queue, and a re-run over HTTP is not handed on yet; re-run it with toolchain rerun --queue');
      const origin = await engine.runs.get(runId);
      if (origin === undefined) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}'`);
      // The view shows the input the new run gets: the origin's with the request's keys replaced.
      const input = { ...(isRecord(origin.input) ? origin.input : {}), ...request.input };
      return start(origin.chain, input, { wait: false }, undefined, undefined, (runOptions) => engine.rerun(runId, { ...runOptions, ...request }));
    },
    async close(graceMs = 10_000): Promise<void> {
      closing = true;
      const running = [...entries.values()].filter((e) => e.live);
      if (running.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([Promise.all(running.map((e) => e.done)), grace]);
      clearTimeout(timer);
      for (const e of running) if (e.result === undefined) e.abort.abort();
      await Promise.all(running.map((e) => e.done));
    },
  };
}

function storedSummary(r: StoredSummary): RunSummary {
  return {
    run_id: r.run_id,
    chain: r.chain,
    status: r.status,
    started_at: r.started_at,
    ...(r.finished_at !== null || r.interrupted ? { duration_ms: r.duration_ms } : {}),
    ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
    interrupted: r.interrupted,
    ...(r.error ? { error: r.error } : {}),
  };
}

/** A stored waiting run's row with what it waits for and until when (from its open waits, as waitingEvents tells them). */
function withWaits(summary: RunSummary, events: readonly RunEvent[]): RunSummary {
  const parked = events.find((e) => e.type === 'run:waiting');
  return parked?.type === 'run:waiting' ? { ...summary, waiting_for: parked.waits, wake_at: parked.wake_at } : summary;
}

/**
 * A for_each step's elements have no events of their own, only records: the ones the store has so
 * far join the live view, keyed `step[i]` as in `runs show`, each with its one bar on the timeline.
 * So do a repeat step's rounds (`step#N`) recorded by an earlier execution of the run.
 */
function withElements(detail: RunDetail, stored: StoredDetail | undefined): RunDetail {
  if (stored === undefined) return detail;
  let steps: Record<string, StepDetail> | undefined;
  for (const [key, s] of Object.entries(stored.steps)) {
    if (!(key.endsWith(']') || /#\d+$/.test(key)) || detail.steps[key] !== undefined || s.started_at === undefined) continue;
    if (s.status !== 'succeeded' && s.status !== 'failed') continue;
    steps ??= { ...detail.steps };
    steps[key] = {
      status: s.status,
      attempts: s.attempts,
      duration_ms: s.duration_ms,
      started_at: s.started_at,
      ...(s.output !== undefined ? { output: s.output } : {}),
      ...(s.error !== undefined ? { error: s.error } : {}),
      timeline: [{ attempt: s.attempts, started_at: s.started_at, duration_ms: s.duration_ms, status: s.status, ...(s.error !== undefined ? { error: s.error } : {}) }],
    };
  }
  return steps === undefined ? detail : { ...detail, steps };
}
