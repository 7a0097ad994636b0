// The executor: plan + input → result (STYLE 1: it never sees YAML and never compiles).
export { executeChain } from './run-chain.js';
export { systemClock, sleep, type Clock, type TimerHandle } from '../common/clock.js';
export { createSlots, type Slots } from './slots.js';
export { backoffDelay, isRetryable } from './backoff.js';
export { checkRunInput, type InputResult } from './run-inputs.js';
export { bindTools, type BoundPlan } from './bind-tools.js';
export { toStepRecord } from './events.js';
export type {
  AgentEvent,
  AgentToolCallEvent,
  AgentTurnEvent,
  EventListener,
  FallbackKind,
  ParentRef,
  RunError,
  RunEvent,
  RunEventType,
  RunFinishedEvent,
  RunStartedEvent,
  StepFailedEvent,
  StepFinishedEvent,
  StepRecord,
  StepRetryingEvent,
  StepSkippedEvent,
  StepStartedEvent,
  StepSucceededEvent,
} from './events.js';
export type { StepError } from './step-error.js';
export type { StepStatus } from './step-state.js';
export type { ExecutorHost, LogEntry, RunOptions, RunResult, StepSummary } from './types.js';
