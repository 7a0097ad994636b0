import { createHash } from 'node:crypto';
import { CallFailure, type RunWaits, type WaitAnswer, type WaitAsk } from '../call/index.js';
import type { Clock } from '../common/clock.js';
import type { EventListener, WaitSummary } from '../run-model/events.js';
import type { RunStore } from '../store/types.js';
import type { StoredWait, WaitRequest } from '../store/wait-types.js';
import { asStoreError } from './group-recorder.js';

// One execution's waits, kept in the run store: what a waiting step (or a dangerous call's
// approval) asks goes through here. The first execution to reach a wait opens it — with its
// deadline fixed then, so a sleep of a day that is woken, crashes and resumes still ends when it
// first said — and every later execution finds the same record (its id is made from the run's id
// and the step's key). What is still open when the run has nothing else to do is what the run
// parks on: the earliest deadline among them is when to look at it again.

export interface RunWaitsSettings {
  readonly store: RunStore;
  readonly runId: string;
  readonly chain: string;
  readonly epoch: number;
  readonly clock: Clock;
  readonly onEvent: EventListener | undefined;
}

/** Where a run parks: the waits still open, and when to look at it again. */
export interface Parking {
  readonly waits: readonly WaitSummary[];
  readonly ids: readonly string[];
  readonly wakeAt: number | null;
}

export class StoredRunWaits implements RunWaits {
  /** Waits found open in this execution, by id. */
  private readonly open = new Map<string, StoredWait>();

  constructor(private readonly s: RunWaitsSettings) {}

  async wait(ask: WaitAsk): Promise<WaitAnswer> {
    const { store, runId, epoch, clock } = this.s;
    const now = clock.now();
    const request: WaitRequest = {
      id: waitId(runId, ask.key, ask.kind),
      key: ask.key,
      kind: ask.kind,
      name: ask.name ?? null,
      match: ask.match ?? null,
      until: ask.untilMs ?? (ask.forMs !== undefined ? now + ask.forMs : null),
      detail: ask.approval ?? null,
    };
    let wait: StoredWait | 'fenced';
    try {
      // Asked again (an agent's call waiting for a decision looks again): a read, not another open.
      const known = this.open.get(request.id);
      wait = known !== undefined ? ((await store.waits.listWaits({ id: known.id, limit: 1 }))[0] ?? known) : await store.waits.openWait(runId, epoch, request, now);
    } catch (error) {
      const e = asStoreError(error, store.url);
      throw new CallFailure({ code: e.code, message: e.message });
    }
    if (wait === 'fenced') throw new CallFailure({ code: 'STORE_FENCED', message: `run ${runId} was taken over by another owner` });
    // Open until answered: what is over is not what the run parks on.
    this.open.delete(wait.id);
    if (wait.outcome !== null) return answerOf(wait);
    if (wait.kind === 'sleep' && wait.until !== null && wait.until <= now) return { over: true, value: { slept_until: new Date(wait.until).toISOString() } };
    if (wait.until !== null && wait.until <= now) {
      // Its timeout came: end it — unless an event or a decision got there first, which then counts.
      const ended = await store.waits.resolveWait(wait.id, timedOut(wait), now).catch(() => undefined);
      if (ended?.wait.outcome) return answerOf(ended.wait);
    }
    this.open.set(wait.id, wait);
    if (wait.kind === 'approval' && wait.created_at === now) this.requested(wait);
    return { over: false, why: describeWait(wait) };
  }

  /** What the run parks on. */
  parking(): Parking {
    let wakeAt: number | null = null;
    const waits: WaitSummary[] = [];
    for (const wait of this.open.values()) {
      if (wait.until !== null && (wakeAt === null || wait.until < wakeAt)) wakeAt = wait.until;
      waits.push(waitSummary(wait));
    }
    return { waits, ids: [...this.open.keys()], wakeAt };
  }

  private requested(wait: StoredWait): void {
    const emit = this.s.onEvent;
    if (emit === undefined) return;
    const d = wait.detail as { prompt?: string; step?: string; tool?: string; args?: Record<string, unknown> } | null;
    try {
      emit({
        type: 'approval:requested',
        run_id: this.s.runId,
        chain: this.s.chain,
        timestamp: wait.created_at,
        id: wait.id,
        step: d?.step ?? wait.key,
        prompt: d?.prompt ?? '',
        ...(d?.tool !== undefined ? { tool: d.tool, args: d.args ?? {} } : {}),
        ...(wait.until !== null ? { until: wait.until } : {}),
      });
    } catch {
      // a listener's exception is its own problem
    }
  }
}

/** A wait's id: stable for the run's step key, short enough to type (`ap_…` for approvals, which people decide by id). */
export function waitId(runId: string, key: string, kind: WaitAsk['kind']): string {
  const hash = createHash('sha256').update(`${runId}\u0000${key}`).digest('base64url').slice(0, 16);
  return `${kind === 'approval' ? 'ap' : 'wt'}_${hash}`;
}

/** The step's answer from a wait that is over. */
export function answerOf(wait: StoredWait): WaitAnswer {
  const o = wait.outcome!;
  if (!o.ok) {
    const who = o.by !== undefined ? ` by ${o.by}` : '';
    return { over: true, error: { code: o.code, message: `${o.message}${who}${o.comment ? `: ${o.comment}` : ''}` } };
  }
  if (wait.kind === 'approval') {
    return { over: true, value: { approved: true, by: o.by ?? 'unknown', comment: o.comment ?? null, at: new Date(wait.resolved_at ?? Date.now()).toISOString() } };
  }
  return { over: true, value: o.value };
}

function timedOut(wait: StoredWait): NonNullable<StoredWait['outcome']> {
  if (wait.kind === 'approval') return { ok: false, code: 'APPROVAL_DENIED', message: `approval ${wait.id} (step '${wait.key}') was not decided before its timeout` };
  return { ok: false, code: 'WAIT_TIMEOUT', message: `no event '${wait.name}' matching ${JSON.stringify(wait.match)} came before the timeout of step '${wait.key}'` };
}

/** A wait as a `run:waiting` event lists it. */
export function waitSummary(wait: StoredWait): WaitSummary {
  return { id: wait.id, kind: wait.kind, step: wait.key, ...(wait.name !== null ? { name: wait.name } : {}), ...(wait.until !== null ? { until: wait.until } : {}) };
}

/** What a wait is, for people: RUN_WAITING's message and the step:waiting event. */
export function describeWait(wait: StoredWait): string {
  const until = wait.until !== null ? new Date(wait.until).toISOString() : undefined;
  switch (wait.kind) {
    case 'sleep':
      return `sleep until ${until}`;
    case 'event':
      return `event ${wait.name}${until ? ` (until ${until})` : ''}`;
    case 'approval':
      return `approval ${wait.id}${until ? ` (until ${until})` : ''}`;
  }
}

/**
 * Ends what a run that has ended still had open (a cancelled run's waits, a failed run's approval
 * request): no one is asked to decide for a run that will not go on, and no event is delivered
 * to it.
 */
export async function closeWaits(store: RunStore, runId: string, now: number, why: string): Promise<void> {
  for (const wait of await store.waits.listWaits({ run_id: runId, open: true })) {
    await store.waits.resolveWait(wait.id, { ok: false, code: 'ABORTED', message: why }, now);
  }
}
