import type { Callee, CallOutcome, RetryReport, RunWaits } from '../call/index.js';
import type { Clock } from '../common/clock.js';
import type { AgentPlan, ChainPlan } from '../compiler/plan.js';
import type { ApproveCallback, PrepareResult, Tool } from '../registry/types.js';
import type { AgentToolCall, AgentTurn, LogEntry } from '../run-model/events.js';

// The contract between an `agent:` step and whoever runs language models. The executor
// knows nothing about models: the engine wires an AgentRunner in (the loop in src/llm/agent), and
// each attempt of an agent step hands it the step's settings, its resolved messages and a host —
// what the run lends the loop: the step's signal, clock and approver, the tools and chains it may
// offer, and where its progress goes.

/** The messages of one attempt: resolved from the step's `prompt` and `system`. */
export interface AgentMessages {
  readonly prompt: string;
  readonly system?: string;
}

export interface AgentRequest {
  readonly plan: AgentPlan;
  readonly messages: AgentMessages;
}

/** Something the model may call: a tool of the run's tool set, or a chain. */
export type AgentTarget =
  | { readonly kind: 'tool'; readonly name: string; readonly tool: Tool }
  | { readonly kind: 'chain'; readonly name: string; readonly plan: ChainPlan };

/** How one tool call the model made is going, from its start; the run reports it as step events of `AGENT›NAME`. */
export interface ToolCallProgress {
  retrying(report: RetryReport): void;
  finished(outcome: CallOutcome): void;
}

export interface AgentHost {
  /** Aborts the HTTP request and every tool call in flight; the loop then rejects with its reason. */
  readonly signal: AbortSignal;
  /** For approval requests and tools' contexts. */
  readonly runId: string;
  readonly step: string;
  readonly approve: ApproveCallback | undefined;
  /**
   * Where a call's approval request is kept when the approver answers 'wait': the turn waits for
   * the decision (the model's other calls go on), and `waitKey` names a call's request.
   */
  readonly waits?: RunWaits;
  waitKey(callId: string): string;
  /** The run's clock and random source: tool calls retry and time out on them. */
  readonly clock: Clock;
  readonly random: () => number;
  /** An environment variable (the API key). */
  env(name: string): string | undefined;
  /** A name from the agent's `tools`: a tool of the run's tool set first, else a chain. */
  resolve(name: string): AgentTarget | undefined;
  /** Every name `resolve` knows, for "closest names" hints. */
  knownNames(): Iterable<string>;
  /** A chain the model may call, as something to call: each call is a run, a child of this step's run. */
  chainCallee(plan: ChainPlan): Callee;
  /** `RUN_ID:STEP_KEY` of one tool call. */
  idempotencyKey(callId: string): string;
  /** Where tools' `ctx.log()` lines go. */
  log(entry: LogEntry): void;
  onTurn(turn: AgentTurn): void;
  /** A tool call the model made starts now. */
  toolCall(call: { readonly id: string; readonly name: string; readonly turn: number }): ToolCallProgress;
  onToolCall(call: AgentToolCall): void;
}

/** One attempt of an agent step; resolves with the step's output. */
export type AgentRunner = (request: AgentRequest, host: AgentHost) => Promise<unknown>;

/** The part of a Callee an agent step shares with every other: it validates its messages itself. */
export function agentMessagesPrepare(args: Record<string, unknown>): PrepareResult {
  const problems = [];
  for (const key of ['prompt', 'system'] as const) {
    const value = args[key];
    if (key === 'prompt' ? value === undefined || value === null : value === null) {
      problems.push({ path: `/${key}`, message: `the agent's ${key} matched nothing`, expected: 'text' });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  // Text as is, other values as JSON.
  const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
  return { ok: true, args: { prompt: text(args.prompt), ...(args.system !== undefined ? { system: text(args.system) } : {}) } };
}
