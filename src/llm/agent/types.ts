import type { AgentPlan, ChainPlan } from '../../compiler/plan.js';
import type { LogEntry, RunResult } from '../../executor/types.js';
import type { ApproveCallback, Tool } from '../../registry/types.js';
import type { TextCallsNote } from './text-calls.js';
import type { ChatMessage, TokenUsage } from './wire.js';

// The agent loop's contract with whoever runs it (the executor, for an `agent` step): what it
// may call, where its events go, and how it is cancelled. The loop itself knows nothing about
// runs, steps or attempts.

export type { AgentPlan } from '../../compiler/plan.js';
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
  /** Every message sent and received, in the wire format: system, user, assistant, tool… */
  readonly transcript: readonly ChatMessage[];
}

/** Something the model may call: a registry tool or a chain. */
export type AgentTarget =
  | { readonly kind: 'tool'; readonly name: string; readonly tool: Tool }
  | { readonly kind: 'chain'; readonly name: string; readonly plan: ChainPlan };

/** One model response, as an event (`agent:turn`). */
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
  /** Present when the endpoint sent no tool_calls and calls were read from the text (`text_calls: auto`). */
  readonly text_calls?: TextCallsNote;
}

/** One executed tool call, as an event (`agent:tool_call`). */
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

export interface AgentHost {
  /** Aborts the HTTP request and every tool call in flight; the loop then rejects with its reason. */
  readonly signal: AbortSignal;
  /** For approval requests and tools' contexts. */
  readonly runId: string;
  readonly step: string;
  readonly approve: ApproveCallback | undefined;
  /** Milliseconds, for durations. */
  now(): number;
  /** An environment variable (the API key). */
  env(name: string): string | undefined;
  /** A name from the agent's `tools`: a tool of the run's tool set first, else a chain. */
  resolve(name: string): AgentTarget | undefined;
  /** Every name `resolve` knows, for "closest names" hints. */
  knownNames(): Iterable<string>;
  /** Runs a chain the model called (as a child of the current run); resolves with its result, failed or not. */
  runChain(plan: ChainPlan, input: unknown, signal: AbortSignal): Promise<RunResult>;
  /** Where tools' `ctx.log()` lines go. */
  log(entry: LogEntry): void;
  onTurn(turn: AgentTurn): void;
  onToolCall(call: AgentToolCall): void;
}

/** The messages of one attempt: resolved from the step's `prompt` and `system`. */
export interface AgentMessages {
  readonly prompt: string;
  readonly system?: string;
}

export interface AgentRequest {
  readonly plan: AgentPlan;
  readonly messages: AgentMessages;
}
