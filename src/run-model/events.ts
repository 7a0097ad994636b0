import type { StepError } from '../common/errors.js';
import type { HandlerPhase, RunError, RunResult } from './result.js';
import type { FallbackKind, SkipReason, StepRecord } from './step-record.js';

// The run events as one typed union. The executor builds them only when someone listens
// (`onEvent`), from the step transitions (executor/step-state.ts) at the moment they happen, so
// their order is the order of the changes: run:started first, run:finished last, and for each
// step started → (retrying)* → succeeded | failed, or a lone skipped. An `agent` step also reports
// each model turn (agent:turn), each tool call its model made as step events of its own (the step
// `AGENT›TOOL`, with the call's id), and each answered call (agent:tool_call); the chains its
// model calls are sub-runs whose `parent` is that step.

/** Set on every event of a sub-chain's run: the run and step that started it. */
export interface ParentRef {
  readonly run_id: string;
  readonly step: string;
}

interface EventBase {
  readonly run_id: string;
  readonly chain: string;
  /** Milliseconds since the epoch, from the engine's clock. */
  readonly timestamp: number;
  readonly parent?: ParentRef;
}

/** Where a step event happened inside its step: an element of a for_each, a call of an agent's model. */
interface StepEventBase extends EventBase {
  readonly step: string;
  readonly index: number;
  /** The element's position, for a `for_each` step. */
  readonly item?: number;
  /** Set on the step events of a tool call an agent's model made: its id and the model turn. */
  readonly call?: { readonly id: string; readonly turn: number };
  /**
   * Set on the events of failure handling: a step of `on_failure` or `finally`, or a compensation
   * (`STEP~compensate`). `index` is then the step's place in its own list (0 for a compensation).
   */
  readonly phase?: HandlerPhase;
}

export interface RunStartedEvent extends EventBase {
  readonly type: 'run:started';
  readonly input: unknown;
}

export interface StepStartedEvent extends StepEventBase {
  readonly type: 'step:started';
  readonly attempt: number;
}

export interface StepRetryingEvent extends StepEventBase {
  readonly type: 'step:retrying';
  /** The attempt that just failed. */
  readonly attempt: number;
  readonly error: StepError;
  /** How long the failed attempt took. */
  readonly duration_ms: number;
  /** The wait before the next attempt. */
  readonly delay_ms: number;
  /** Set when what comes next is the fallback rather than another attempt. */
  readonly fallback?: FallbackKind;
}

/** A running call reported how far it has got (an MCP server's progress notifications, say). */
export interface StepProgressEvent extends StepEventBase {
  readonly type: 'step:progress';
  readonly attempt: number;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface StepSucceededEvent extends StepEventBase, StepRecord {
  readonly type: 'step:succeeded';
  readonly status: 'succeeded';
  readonly attempt: number;
  readonly output: unknown;
}

export interface StepFailedEvent extends StepEventBase, StepRecord {
  readonly type: 'step:failed';
  readonly status: 'failed';
  readonly attempt: number;
  readonly error: StepError;
}

export interface StepSkippedEvent extends StepEventBase, StepRecord {
  readonly type: 'step:skipped';
  readonly status: 'skipped';
  readonly attempt: 0;
  readonly reason: SkipReason;
}

/** A step's wait is not over (a sleep, an event, a decision): it holds nothing while the run waits. */
export interface StepWaitingEvent extends StepEventBase {
  readonly type: 'step:waiting';
  /** What it waits for, for people: `event payment.settled`, `sleep until 2026-12-02T05:00:00.000Z`, `approval ap_…`. */
  readonly waiting_for: string;
}

/**
 * A round of a `repeat` step ended (its call succeeded): the round's output, whether `until` held,
 * and when the next round starts. The round's record is kept under `STEP#ROUND`.
 */
export interface StepRoundEvent extends StepEventBase {
  readonly type: 'step:round';
  /** 1-based. */
  readonly round: number;
  /** The step's `max_attempts`: the most rounds it runs. */
  readonly max_rounds: number;
  /** Calls this round made (its retries and fallback included). */
  readonly attempts: number;
  readonly output: unknown;
  readonly started_at: number;
  readonly duration_ms: number;
  /** `until` held after this round: the step succeeds with its output. */
  readonly done: boolean;
  /** When the next round starts (milliseconds since the epoch); absent when none follows. */
  readonly next_at?: number;
}

/** What a parked run waits for: one entry per open wait. */
export interface WaitSummary {
  /** The wait's id (an approval's is what people decide by). */
  readonly id: string;
  readonly kind: 'sleep' | 'event' | 'approval';
  /** The step key that waits. */
  readonly step: string;
  /** The event's name (event waits). */
  readonly name?: string;
  /** A sleep's end, or a timeout: milliseconds since the epoch. */
  readonly until?: number;
}

/** The run has nothing left but waits: it is parked in the run store, and no process holds it. */
export interface RunWaitingEvent extends EventBase {
  readonly type: 'run:waiting';
  readonly waits: readonly WaitSummary[];
  /** When it is looked at again (null: when one of its waits is resolved). */
  readonly wake_at: number | null;
}

/** A waiting run is continued: a wait of it is over (or its timeout came). */
export interface RunWokenEvent extends EventBase {
  readonly type: 'run:woken';
}

/** A person is asked to decide: an `approval` step, or a dangerous tool's call with no standing approval. */
export interface ApprovalRequestedEvent extends EventBase {
  readonly type: 'approval:requested';
  readonly id: string;
  readonly step: string;
  readonly prompt: string;
  /** The dangerous tool and its validated arguments, for a tool's call. */
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  readonly until?: number;
}

export interface ApprovalDecidedEvent extends EventBase {
  readonly type: 'approval:decided';
  readonly id: string;
  readonly approved: boolean;
  readonly by: string;
  readonly comment?: string;
}

export interface RunFinishedEvent extends EventBase {
  readonly type: 'run:finished';
  readonly status: RunResult['status'];
  readonly duration_ms: number;
  readonly outputs: unknown;
  readonly error?: RunError;
}

/** What a model's turns cost, as its endpoint counted it. */
export interface TokenUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** One model response of an agent step. */
export interface AgentTurn {
  /** 1-based. */
  readonly turn: number;
  readonly model: string;
  readonly finish_reason: string | null;
  readonly content: string | null;
  /** The calls the model asked for, by id and the name it used. */
  readonly tool_calls: readonly { readonly id: string; readonly name: string }[];
  /** This turn's usage. */
  readonly usage: TokenUsage;
  /** Every turn's total tokens so far, this one included. */
  readonly total_tokens: number;
  /** The HTTP round trip. */
  readonly duration_ms: number;
  /** Set when the calls were read from the reply's text (the endpoint sent no `tool_calls`). */
  readonly text_calls?: {
    /** The formats the calls were written in (`hermes`, `harmony`, …). */
    readonly formats: readonly string[];
    /** How many calls were read. */
    readonly calls: number;
    /** What looked like a call and was not one. */
    readonly problems: readonly { readonly code: string; readonly message: string }[];
  };
}

/** One executed tool call of an agent step, as the model will read it. */
export interface AgentToolCall {
  readonly turn: number;
  readonly tool_call_id: string;
  /** The function name the model used. */
  readonly name: string;
  /** The tool (qualified name) or chain it resolved to; undefined when the name is not one the agent offers. */
  readonly target?: { readonly kind: 'tool' | 'chain'; readonly name: string };
  /** Parsed arguments, or the raw text when they were not JSON. */
  readonly arguments: unknown;
  readonly is_error: boolean;
  /** What went back to the model. */
  readonly content: string;
  readonly duration_ms: number;
}

/** Where inside a running `agent` step an agent event happened. */
interface AgentEventBase extends EventBase {
  readonly step: string;
  readonly index: number;
  readonly attempt: number;
  /** The element's position, for a `for_each` step. */
  readonly item?: number;
}

/** An agent step's model answered (one per turn, after the HTTP round trip). */
export interface AgentTurnEvent extends AgentEventBase, AgentTurn {
  readonly type: 'agent:turn';
}

/** One tool or chain call an agent's model asked for has been answered (is_error when it failed). */
export interface AgentToolCallEvent extends AgentEventBase, AgentToolCall {
  readonly type: 'agent:tool_call';
}

export type StepFinishedEvent = StepSucceededEvent | StepFailedEvent | StepSkippedEvent;

export type StepEvent = StepStartedEvent | StepRetryingEvent | StepProgressEvent | StepWaitingEvent | StepRoundEvent | StepFinishedEvent;

export type WaitEvent = RunWaitingEvent | RunWokenEvent | ApprovalRequestedEvent | ApprovalDecidedEvent;

export type AgentEvent = AgentTurnEvent | AgentToolCallEvent;

export type RunEvent = RunStartedEvent | StepEvent | AgentEvent | WaitEvent | RunFinishedEvent;

export type RunEventType = RunEvent['type'];

export type EventListener = (event: RunEvent) => void;

// Beside its events, a run reports the lines its tools log (to the engine's `logger`) and how far
// its for_each steps have got (to the run's `onProgress`); neither is a run event.

/** A line a tool wrote with `ctx.log()` during a step's call. */
export interface LogEntry {
  readonly timestamp: number;
  readonly run_id: string;
  readonly step: string;
  readonly attempt: number;
  /** The for_each element (0-based) whose call wrote it; absent for a step without for_each. */
  readonly item?: number;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** A for_each step's elements done so far. */
export interface ForEachProgress {
  readonly run_id: string;
  readonly step: string;
  readonly done: number;
  readonly total: number;
}

/** The StepRecord inside a terminal step event: exactly what a run store persists. */
export function toStepRecord(event: StepFinishedEvent): StepRecord {
  const { step, index, status, attempts, output, error, started_at, duration_ms, fallback, reason } = event;
  return { step, index, status, attempts, output, error, started_at, duration_ms, fallback, reason };
}

/**
 * The `run:started` (unless one was sent already) and `run:finished` of a run known only by its
 * result, finished at `at`: one that could not start, or one a queue's worker executed. A
 * listener's exception is its own problem.
 */
export function emitRunBounds(emit: EventListener, result: RunResult, input: unknown, at: number, started = false): void {
  const { run_id, chain, status, duration_ms, outputs, error } = result;
  try {
    if (!started) emit({ type: 'run:started', run_id, chain, timestamp: at - duration_ms, input });
    emit({ type: 'run:finished', run_id, chain, timestamp: at, status, duration_ms, outputs, ...(error !== undefined ? { error } : {}) });
  } catch {
    // ignored on purpose
  }
}
