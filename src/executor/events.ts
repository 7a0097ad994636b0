import type { AgentToolCall, AgentTurn } from '../llm/agent/types.js';
import type { StepError } from './step-error.js';

// The events of SPEC §8 as one typed union. They are built only when someone listens (`onEvent`),
// as plain objects, and emitted synchronously at the moment the state changes, so their order is
// the order of the changes: run:started first, run:finished last, and for each step
// started → (retrying)* → succeeded | failed, or a lone skipped. An `agent` step also reports each
// model turn (agent:turn) and each answered tool call (agent:tool_call) between its started and
// its end; the chains its model calls are sub-runs whose `parent` is that step.

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

export type FallbackKind = 'input' | 'tool' | 'output';

/**
 * The unit of checkpointing (SPEC §7): what a store persists when a step finishes, and all a
 * resumed run needs to treat the step as done. Every terminal step event carries these fields.
 */
export interface StepRecord {
  readonly step: string;
  readonly index: number;
  readonly status: 'succeeded' | 'failed' | 'skipped';
  /** Tool calls made (for `for_each`, the most any one item needed; 0 when skipped). */
  readonly attempts: number;
  /** Present when succeeded, and when failed with `on_error: continue` (`{ error: { code, message } }`). */
  readonly output?: unknown;
  readonly error?: StepError;
  readonly started_at: number;
  readonly duration_ms: number;
}

export interface RunStartedEvent extends EventBase {
  readonly type: 'run:started';
  readonly input: unknown;
}

export interface StepStartedEvent extends EventBase {
  readonly type: 'step:started';
  readonly step: string;
  readonly index: number;
  readonly attempt: number;
}

export interface StepRetryingEvent extends EventBase {
  readonly type: 'step:retrying';
  readonly step: string;
  readonly index: number;
  /** The attempt that just failed. */
  readonly attempt: number;
  readonly error: StepError;
  /** How long the failed attempt took. */
  readonly duration_ms: number;
  /** The wait before the next attempt. */
  readonly delay_ms: number;
  /** Set when what comes next is the fallback rather than another attempt. */
  readonly fallback?: FallbackKind;
  /** The element's position, for a `for_each` step. */
  readonly item?: number;
}

export interface StepSucceededEvent extends EventBase, StepRecord {
  readonly type: 'step:succeeded';
  readonly status: 'succeeded';
  readonly attempt: number;
  readonly output: unknown;
  /** Set when the output came from a fallback. */
  readonly fallback?: FallbackKind;
}

export interface StepFailedEvent extends EventBase, StepRecord {
  readonly type: 'step:failed';
  readonly status: 'failed';
  readonly attempt: number;
  readonly error: StepError;
}

export interface StepSkippedEvent extends EventBase, StepRecord {
  readonly type: 'step:skipped';
  readonly status: 'skipped';
  readonly attempt: 0;
  /** `when`: its own condition was false; `dependency`: a step it reads or depends on was skipped. */
  readonly reason: 'when' | 'dependency';
}

export interface RunFinishedEvent extends EventBase {
  readonly type: 'run:finished';
  readonly status: 'succeeded' | 'failed';
  readonly duration_ms: number;
  readonly outputs: unknown;
  readonly error?: RunError;
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

export type AgentEvent = AgentTurnEvent | AgentToolCallEvent;

export type RunEvent = RunStartedEvent | StepStartedEvent | StepRetryingEvent | StepFinishedEvent | AgentEvent | RunFinishedEvent;

export type RunEventType = RunEvent['type'];

export type EventListener = (event: RunEvent) => void;

/** Why a run failed; `step` names the step whose failure ended it. */
export interface RunError extends StepError {
  readonly step?: string;
}

/** The StepRecord inside a terminal step event: exactly what a run store persists. */
export function toStepRecord(event: StepFinishedEvent): StepRecord {
  const { step, index, status, attempts, output, error, started_at, duration_ms } = event;
  return {
    step,
    index,
    status,
    attempts,
    ...(output !== undefined ? { output } : {}),
    ...(error !== undefined ? { error } : {}),
    started_at,
    duration_ms,
  };
}
