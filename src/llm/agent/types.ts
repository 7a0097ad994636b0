import type { ChatMessage, TokenUsage } from './wire.js';

// The agent loop's own types. Its contract with whoever runs it — the host an attempt of an
// `agent` step lends it, and what it reports — belongs to the executor (executor/agent-step.ts),
// which runs agent steps through an AgentRunner the engine wires in: the loop itself knows
// nothing about runs, steps or attempts.

export type { AgentPlan } from '../../compiler/plan.js';
export type { AgentHost, AgentMessages, AgentRequest, AgentTarget } from '../../executor/index.js';
export type { AgentToolCall, AgentTurn } from '../../run-model/events.js';
export type { ChatMessage, TokenUsage } from './wire.js';

/** Why the loop ended. */
export type AgentStopReason = 'final' | 'max_turns' | 'max_failures' | 'budget';

/** An agent step's output. */
export interface AgentOutput {
  /** The last assistant text ('' when the last turn only called tools). */
  readonly text: string;
  readonly turns: number;
  readonly stop_reason: AgentStopReason;
  /** Summed over every turn, as the endpoint reported it. */
  readonly usage: TokenUsage;
  /** Every message sent and received, in the wire format: system, user, assistant, tool… (bounded: see output-transcript.ts) */
  readonly transcript: readonly ChatMessage[];
  /** How many messages the output's transcript left out between its first two and its last ones. */
  readonly transcript_omitted?: number;
}
