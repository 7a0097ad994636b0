import type { StepError } from '../common/errors.js';

// What a run asks of whoever keeps its waits (the durable runs, over the run store): open or find
// the wait a step (or a dangerous call's approval) is at, and say whether it is over. A wait that
// is not over parks the step: its callee throws RUN_WAITING, which is no failure — the run parks
// once nothing else is at work, and a later execution starts the step again and asks again.

export interface WaitAsk {
  /** The step key in the top run (`pay`, `sub›pay`, `each[2]`), `#N` for its Nth attempt, `!` for a dangerous call's approval. */
  readonly key: string;
  readonly kind: 'sleep' | 'event' | 'approval';
  /** The event's name. */
  readonly name?: string;
  /** Payload keys that must equal (an event wait). */
  readonly match?: Readonly<Record<string, unknown>>;
  /** A sleep's length, or a timeout, from the moment the wait first opens. */
  readonly forMs?: number;
  /** A sleep's end (`sleep_until`), milliseconds since the epoch. */
  readonly untilMs?: number;
  /** For an approval: what the person decides on. */
  readonly approval?: ApprovalDetail;
}

export interface ApprovalDetail {
  readonly prompt: string;
  /** The step (its key) that asks. */
  readonly step: string;
  /** A dangerous tool's call: the tool and its validated arguments. */
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  /** Who may decide; anyone when absent. */
  readonly approvers?: readonly string[];
}

export type WaitAnswer =
  /** Over: the step's output (a sleep's `{ slept_until }`, the event's payload, the decision). */
  | { readonly over: true; readonly value: unknown }
  /** Over, and it failed the step (WAIT_TIMEOUT, APPROVAL_DENIED). */
  | { readonly over: true; readonly error: StepError }
  /** Not over: what it waits for, for people (RUN_WAITING's message). */
  | { readonly over: false; readonly why: string };

export interface RunWaits {
  wait(ask: WaitAsk): Promise<WaitAnswer>;
}
