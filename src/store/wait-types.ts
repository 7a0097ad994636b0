// The store's half of runs that wait. A wait is a record of its own, opened by the run that waits
// (under the epoch it holds, like a step result) and resolved by whoever ends it — an event, a
// person's decision, its timeout — first writer wins, so an event or a decision is consumed once
// however many processes deliver it. A run with nothing left but waits is parked: status
// `waiting`, no owner, and a time to look at it again (`wake_at`: its earliest sleep or timeout,
// or now once one of its waits is resolved). Whoever wakes it claims it by the usual
// compare-and-set on the epoch, so exactly one process continues it.

import type { StoredRun } from './types.js';

export type WaitKind = 'sleep' | 'event' | 'approval';

/** What a run waits for, as it opens the wait. */
export interface WaitRequest {
  /** Unique in the store, made from the run's id and `key`: opening it again finds the same record. */
  readonly id: string;
  /** The step's key in its run (`pay`, `each[2]`, `sub›pay`), with `#N` for its Nth attempt and `!` for a dangerous call's approval. */
  readonly key: string;
  readonly kind: WaitKind;
  /** The event's name (event waits); null otherwise. */
  readonly name: string | null;
  /** Each key must equal the event payload's value at that key (event waits); null otherwise. */
  readonly match: Readonly<Record<string, unknown>> | null;
  /** A sleep's end; an event's or an approval's timeout; null for none. Milliseconds since the epoch. */
  readonly until: number | null;
  /** What people see of it (an approval's prompt, tool, arguments, step, approvers): JSON. */
  readonly detail: unknown;
}

/** How a wait ended. */
export type WaitOutcome =
  | { readonly ok: true; readonly value: unknown; readonly by?: string; readonly comment?: string }
  | { readonly ok: false; readonly code: 'WAIT_TIMEOUT' | 'APPROVAL_DENIED' | 'ABORTED'; readonly message: string; readonly by?: string; readonly comment?: string };

export interface StoredWait extends WaitRequest {
  readonly run_id: string;
  readonly chain: string;
  readonly created_at: number;
  /** Null while it is open. */
  readonly outcome: WaitOutcome | null;
  readonly resolved_at: number | null;
}

export interface WaitFilter {
  /** The one wait with this id. */
  readonly id?: string;
  readonly run_id?: string;
  readonly kind?: WaitKind;
  /** Event waits for this event name. */
  readonly name?: string;
  /** true: only open waits; false: only resolved ones; absent: both. */
  readonly open?: boolean;
  /** Default 1,000. */
  readonly limit?: number;
}

export interface StoredEvent {
  /** Events are idempotent by id: a second event with an id recorded before is not delivered. */
  readonly id: string;
  readonly name: string;
  readonly payload: unknown;
  readonly at: number;
}

/** An event as the store keeps it, with its place among the events recorded. */
export interface RecordedEvent extends StoredEvent {
  /**
   * Its position: larger than that of every event recorded before it, never given twice (not
   * even after a prune), the same for every process on the store. Once a listing has given an
   * event, no event with a smaller position appears later: a reader that keeps the last position
   * it read misses nothing (how processes learn of events other processes recorded).
   */
  readonly seq: number;
}

export interface EventFilter {
  /** Only events after this position (a `seq` a listing gave); default 0, the oldest kept. */
  readonly after?: number;
  /** Only events of this name. */
  readonly name?: string;
  /** true: the newest `limit` of them; default the oldest. Either way in recording order. */
  readonly newest?: boolean;
  /** Default 1,000. */
  readonly limit?: number;
}

export interface WaitStore {
  /**
   * Opens a wait of a run the caller owns at `epoch`, unless one with that id exists already:
   * either way the wait as the store has it (an existing one keeps its `until` and outcome).
   */
  openWait(runId: string, epoch: number, wait: WaitRequest, now: number): Promise<StoredWait | 'fenced'>;
  /**
   * Parks a run the caller owns at `epoch` on its open waits `waits` (their ids): status `waiting`,
   * owner and lease cleared, to be looked at again at `wakeAt` (null: only when a wait of it is
   * resolved) — or at once, if one of `waits` was resolved meanwhile. The epoch stays: whoever
   * wakes it claims it.
   */
  parkRun(runId: string, epoch: number, wakeAt: number | null, waits: readonly string[], now: number): Promise<'ok' | 'fenced'>;
  /** When a waiting run is to be looked at again (null: when a wait of it is resolved); undefined for a run that is not waiting. */
  wakeAt(runId: string): Promise<number | null | undefined>;
  /**
   * Ends an open wait with `outcome`; the first outcome written wins (`first: false`, and the
   * wait as it was ended, for every later one). A waiting run of the wait is then due at once.
   * Undefined: no wait has that id.
   */
  resolveWait(id: string, outcome: WaitOutcome, now: number): Promise<{ readonly wait: StoredWait; readonly first: boolean } | undefined>;
  /** Waits by run, kind, event name and openness; oldest first. */
  listWaits(filter?: WaitFilter): Promise<readonly StoredWait[]>;
  /** Waiting runs whose `wake_at` has come, earliest first. */
  dueRuns(now: number, limit: number): Promise<readonly StoredRun[]>;
  /** Keeps an event; false when an event with its id was kept before (then nothing is delivered again). */
  recordEvent(event: StoredEvent): Promise<boolean>;
  /** The events kept after a position (of a name), in recording order: how processes learn of events recorded elsewhere. */
  listEvents(filter?: EventFilter): Promise<readonly RecordedEvent[]>;
}
