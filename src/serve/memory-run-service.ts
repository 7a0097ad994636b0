import type { Engine } from '../engine.js';
import type { RunEvent, RunOptions, RunResult } from '../executor/index.js';
import type { ApproveCallback } from '../registry/types.js';
import { EventFeed } from './event-feed.js';
import { RunView } from './run-view.js';
import { ServiceError, type ListQuery, type RunDetail, type RunService, type RunSummary, type StartOptions, type StartOutcome } from './run-service.js';

// The RunService of a server without a run store: the runs it started, their events and results,
// in memory, the newest `maxRuns` kept (finished runs are dropped oldest first; running ones
// never). Resume needs what a store records and answers 409 RESUME_UNAVAILABLE.

export interface MemoryRunServiceOptions {
  /** Every event of every run goes here too (metrics, logs, traces). */
  readonly onEvent?: (event: RunEvent) => void;
  /** Dangerous tools: anything but `true` refuses the call (APPROVAL_DENIED). */
  readonly approve?: ApproveCallback;
  /** Finished runs kept (default 1,000). */
  readonly maxRuns?: number;
}

/** Codes with which a run fails before any step ran because the request itself is wrong. */
const REQUEST_CODES: ReadonlySet<string> = new Set(['CHAIN_NOT_FOUND', 'INPUT_INVALID']);

interface Entry {
  readonly view: RunView;
  readonly feed: EventFeed;
  readonly abort: AbortController;
  readonly done: Promise<RunResult>;
  result?: RunResult;
}

export function createMemoryRunService(engine: Engine, options: MemoryRunServiceOptions = {}): RunService {
  const maxRuns = options.maxRuns ?? 1000;
  const entries = new Map<string, Entry>();
  const observe = options.onEvent;
  const approve: ApproveCallback = options.approve ?? (() => false);
  let closing = false;

  function prune(): void {
    if (entries.size <= maxRuns) return;
    // A Map iterates in insertion order: oldest first.
    for (const [id, entry] of entries) {
      if (entries.size <= maxRuns) break;
      if (entry.result !== undefined) entries.delete(id);
    }
  }

  function find(runId: string): Entry {
    const entry = entries.get(runId);
    if (!entry) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${runId}' on this server`);
    return entry;
  }

  async function start(chain: string, input: unknown, opts: StartOptions): Promise<StartOutcome> {
    if (closing) throw new ServiceError(503, 'SHUTTING_DOWN', 'the server is shutting down and takes no new runs');
    if (opts.runId !== undefined) {
      const existing = entries.get(opts.runId);
      if (existing) {
        // SPEC §7.2: a run id is an idempotency key.
        if (existing.result === undefined) throw new ServiceError(409, 'RUN_IN_PROGRESS', `run '${opts.runId}' is still running`);
        return opts.wait ? { run_id: opts.runId, result: existing.result } : { run_id: opts.runId };
      }
    }
    const abort = new AbortController();
    let entry: Entry | undefined;
    let early: RunEvent[] | undefined = [];
    // The engine picks its own ids today; a caller's run id is then an alias the events are
    // rewritten to. (When RunOptions gains `runId`, the engine uses it and nothing is rewritten.)
    let engineId: string | undefined;
    const alias = opts.runId;
    const rewrite = (e: RunEvent): RunEvent => {
      if (alias === undefined || engineId === alias) return e;
      if (e.run_id === engineId) return { ...e, run_id: alias } as RunEvent;
      if (e.parent?.run_id === engineId) return { ...e, parent: { ...e.parent, run_id: alias } } as RunEvent;
      return e;
    };
    const onEvent = (raw: RunEvent): void => {
      if (engineId === undefined && raw.type === 'run:started' && raw.parent === undefined) engineId = raw.run_id;
      const e = rewrite(raw);
      if (entry) {
        observe?.(e);
        entry.view.apply(e);
        entry.feed.push(e);
      } else early?.push(e);
    };
    const runOptions: RunOptions & { runId?: string } = { signal: abort.signal, onEvent, approve, ...(alias !== undefined ? { runId: alias } : {}) };
    const done = engine.run(chain, input, runOptions);
    // run:started (and, for a request that can never run, run:finished) arrive synchronously.
    const first = early[0];
    const finishedEarly = early.find((e): e is Extract<RunEvent, { type: 'run:finished' }> => e.type === 'run:finished' && e.parent === undefined);
    if (finishedEarly?.error && REQUEST_CODES.has(finishedEarly.error.code) && !early.some((e) => e.type === 'step:started')) {
      throw new ServiceError(400, finishedEarly.error.code, finishedEarly.error.message);
    }
    const runId = alias ?? engineId ?? (first?.run_id as string | undefined);
    const id = runId ?? (await done).run_id;
    const startedAt = first?.timestamp ?? Date.now();
    const view = new RunView(id, chain, input, startedAt, (name) => engine.chain(name));
    const feed = new EventFeed(id);
    entry = { view, feed, abort, done };
    // Observed only now: a request refused above leaves no trace in the metrics (an unknown
    // chain name must not become a label value).
    for (const e of early) {
      observe?.(e);
      view.apply(e);
      feed.push(e);
    }
    early = undefined;
    entries.set(id, entry);
    const settled = done.then((result) => {
      const final: RunResult = result.run_id === id ? result : { ...result, run_id: id };
      entry!.result = final;
      prune();
      return final;
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
      const out: RunSummary[] = [];
      const all = [...entries.values()];
      for (let k = all.length - 1; k >= 0 && out.length < query.limit; k--) {
        const view = all[k]!.view;
        if (query.status !== undefined && view.status !== query.status) continue;
        if (query.chain !== undefined && view.chain !== query.chain) continue;
        out.push(view.summary());
      }
      return out;
    },
    async get(runId: string): Promise<RunDetail | undefined> {
      return entries.get(runId)?.view.detail();
    },
    async events(runId: string) {
      return entries.get(runId)?.feed.read();
    },
    async cancel(runId: string): Promise<RunSummary> {
      const entry = find(runId);
      if (entry.view.status !== 'running') throw new ServiceError(409, 'RUN_FINISHED', `run '${runId}' has already finished (${entry.view.status})`);
      entry.view.cancelRequested = true;
      entry.abort.abort();
      await entry.done;
      return entry.view.summary();
    },
    async resume(runId: string): Promise<StartOutcome> {
      find(runId);
      throw new ServiceError(409, 'RESUME_UNAVAILABLE', `run '${runId}' cannot be resumed: this server keeps runs in memory only; resuming needs a run store, which this server was started without`);
    },
    async close(graceMs = 10_000): Promise<void> {
      closing = true;
      const running = [...entries.values()].filter((e) => e.result === undefined);
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
