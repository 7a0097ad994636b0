import type { RetryPolicy } from '../call/types.js';
import type { JsonSchema } from '../common/json.js';
import type { CompiledCondition, CompiledPath, CompiledValue } from '../expr/types.js';
import type { HandlerPhase } from '../run-model/result.js';
import type { ChainFlow } from './flow/flow-facts.js';

// The frozen result of compiling a chain: everything a run needs, already resolved. The executor
// walks these structures and parses nothing.


export type { BackoffPolicy, RetryPolicy } from '../call/types.js';

/** A fixed value a fallback ends with (the value itself may be null). */
export interface FixedOutput {
  readonly value: unknown;
}

/**
 * What is tried once after the last attempt fails: the step's tool with overrides
 * merged over its arguments, or another tool (with or without overrides) — either possibly followed
 * by a fixed output if that call fails too — or a fixed output alone.
 */
export type FallbackPolicy =
  | { readonly kind: 'input'; readonly input: CompiledValue; readonly output?: FixedOutput }
  | { readonly kind: 'tool'; readonly tool: string; readonly input?: CompiledValue; readonly output?: FixedOutput }
  | { readonly kind: 'output'; readonly output: FixedOutput };

/** What a step runs. */
export type StepTarget =
  | { readonly kind: 'tool'; readonly tool: string }
  | { readonly kind: 'chain'; readonly chain: string }
  | { readonly kind: 'agent'; readonly agent: AgentPlan }
  | { readonly kind: 'wait'; readonly wait: WaitPlan };

/**
 * A step that waits (a sleep, an event, a person): what is fixed in the file. What is read from
 * the run — `sleep_until`'s time, `wait_for`'s match, an approval's prompt — is the step's `input`
 * (`{ until }`, `{ match }`, `{ prompt }`), resolved when the wait begins like any input_map.
 */
export type WaitPlan =
  | { readonly type: 'sleep'; readonly ms: number }
  | { readonly type: 'sleep_until' }
  | { readonly type: 'event'; readonly event: string; readonly timeoutMs?: number }
  | { readonly type: 'approval'; readonly timeoutMs?: number; readonly approvers?: readonly string[] };

/**
 * An `agent` step's fixed settings. Its `system` and `prompt` are the step's `input`
 * (`{ prompt, system? }`), so they are resolved, and create DAG edges, like any input_map.
 */
export interface AgentPlan {
  /** Without a trailing slash; requests go to `${baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKeyEnv?: string;
  /** Tool (`name` or `plugin/name`) and chain names the model may call, as written. */
  readonly tools: readonly string[];
  readonly maxTurns: number;
  readonly maxFailures: number;
  readonly budgetTokens?: number;
  /** `text_calls`: left out when the chain does not say (the loop then reads calls written as text, 'auto'). */
  readonly textCalls?: 'auto' | 'off';
}

export interface PlanStep {
  /** Position in the file; `steps[index]` of the plan. */
  readonly index: number;
  readonly name: string;
  /** RFC 6901 pointer of the step in its file (`/steps/2`): its id in diagnostics, events and logs. */
  readonly pointer: string;
  readonly line: number;
  readonly col: number;
  readonly target: StepTarget;
  /** What it runs, for people: the tool (`name` or `plugin/name`), `chain NAME`, or `agent MODEL`. */
  readonly label: string;
  /** The arguments: always an object value (for an agent, `{ prompt, system? }`). */
  readonly input: CompiledValue;
  readonly when?: CompiledCondition;
  /** `whenPerItem`: the step's `when` reads `$.item` or `$.index`, so it decides per element. */
  /** `distribute`: on workers, each element is a job of its own. */
  readonly forEach?: { readonly items: CompiledPath; readonly maxConcurrency?: number; readonly whenPerItem?: true; readonly distribute?: true };
  readonly timeoutMs?: number;
  readonly retry: RetryPolicy;
  readonly fallback?: FallbackPolicy;
  /** `repeat:` — the step runs in rounds until `until` holds (compile-repeat.ts). */
  readonly repeat?: RepeatPlan;
  readonly onError: 'fail' | 'continue';
  readonly parallel: boolean;
  /** Indices of the steps this one waits for (references, depends_on and order), ascending. */
  readonly waitsFor: readonly number[];
  /** The part of `waitsFor` through which a skip propagates: references and depends_on, not order. */
  readonly skipsWith: readonly number[];
  /** Indices of the steps that wait for this one, ascending. */
  readonly dependents: readonly number[];
}

/**
 * A polling step: each round is the step's call (its retry and fallback included); after a round,
 * `until` is read with `$.this` = the round's output; while it is false the run sleeps `everyMs`
 * (a durable sleep, measured from the end of the round) and runs another, at most `maxAttempts`.
 */
export interface RepeatPlan {
  readonly until: CompiledCondition;
  readonly everyMs: number;
  readonly maxAttempts: number;
}

export interface ChainInputs {
  /** `{ type: 'object', properties, required, additionalProperties: false }`. */
  readonly schema: JsonSchema;
  readonly names: readonly string[];
}

export interface ChainPlan {
  readonly name: string;
  readonly version?: string;
  readonly description?: string;
  /** The file it came from, as named by the caller ('<memory>' when compiled from text). */
  readonly file: string;
  /** sha256 of the source text. */
  readonly hash: string;
  readonly inputs: ChainInputs;
  /** In file order: `steps[i].index === i`. */
  readonly steps: readonly PlanStep[];
  /** A topological order of step indices. */
  readonly order: readonly number[];
  /** Steps that wait for nothing. */
  readonly roots: readonly number[];
  /** By step index, how many steps each waits for: what a run's countdown per step starts from. */
  readonly waitCounts: readonly number[];
  /** A run of it may wait: it has a waiting step, or runs sub-chains (which may have one). */
  readonly mayWait: boolean;
  /** The `outputs` map as an object value; undefined = the output of the last step that ran. */
  readonly outputs?: CompiledValue;
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** Every tool the chain may call (steps and fallbacks; the names an agent offers are in its step's `agent.tools`). */
  readonly tools: readonly string[];
  /** Every chain it runs as a sub-chain. */
  readonly chains: readonly string[];
  /** What its data flows through, for the type check and the inferred outputs schema. */
  readonly flow: ChainFlow;
  /** When it runs on its own (`triggers:`), in file order; absent when it declares none. Not part of `hash`. */
  readonly triggers?: readonly TriggerPlan[];
  /** What runs once its steps have ended (`on_failure`, `finally`, the steps' `compensate`); absent when it has none of them. */
  readonly handlers?: HandlerPlans;
  /** Set on the plan of a handler list or of one compensation: which part of the run it is (absent on a chain's own plan). */
  readonly phase?: HandlerPhase;
}

/**
 * A chain's failure handling. Each handler list is a plan of its own, run like a sub-chain of the
 * run once the run's steps have ended (executor/run-chain.ts): its inputs are the run's context
 * (inputs and step outputs) with `error` (and, for `finally`, `status`); its steps are recorded
 * under their own names. A compensation is a plan of one step, `NAME~compensate`, whose context
 * adds `this` and `this_input`.
 */
export interface HandlerPlans {
  /** `on_failure:`, run when the run fails. */
  readonly onFailure?: ChainPlan;
  /** `finally:`, run after the run has ended, whatever its status. */
  readonly finally?: ChainPlan;
  /** By step index: the step's compensation, or undefined for a step without one. */
  readonly compensations: readonly (ChainPlan | undefined)[];
}

export type TriggerKind = 'schedule' | 'every' | 'event' | 'webhook';

/**
 * A trigger: a cron `schedule` in a zone, an interval (`every`, ticks at the multiples of
 * `everyMs` since the Unix epoch), an `event` by name (and `match`), or a signed `webhook`.
 * `input` is read from `{ tick: { at, trigger } }` for ticks, `{ event: { name, id, payload, … } }` for events and webhooks.
 */
export interface TriggerPlan {
  /** Its id in run ids (`CHAIN#ID@TICK`, `CHAIN#ID@EVENT`): the file's `id`, or its 1-based position. */
  readonly id: string;
  readonly kind: TriggerKind;
  /** The cron expression (`schedule`). */
  readonly cron?: string;
  /** The zone a `schedule` is read in (default UTC; UTC for the other kinds, which have none). */
  readonly timezone: string;
  /** The interval (`every`), whole seconds. */
  readonly everyMs?: number;
  /** The event's name (`event`). */
  readonly event?: string;
  /** Each key must equal the event payload's value at that key (`event`); absent: every event of the name. */
  readonly match?: Readonly<Record<string, unknown>>;
  /** How deliveries reach it and are verified (`webhook`). */
  readonly webhook?: WebhookPlan;
  /** The run's input: `input` (constant) or `input_map` (reads `$.tick` or `$.event`); none: an empty input. */
  readonly input?: CompiledValue;
  /** Missed ticks or events (`none` for webhooks, whose senders deliver again). */
  readonly catchup: 'none' | 'latest' | 'all';
  /** A tick or event while a run of the trigger goes (`allow` for webhooks). */
  readonly overlap: 'allow' | 'skip' | 'queue';
  readonly enabled: boolean;
  /** `/triggers/0` */
  readonly pointer: string;
  readonly line: number;
  readonly col: number;
}

/** A webhook trigger's route and signature check: `POST /hooks/PATH` on serve. */
export interface WebhookPlan {
  readonly path: string;
  readonly signature: 'github' | 'stripe' | 'hmac-sha256';
  /** The variable holding the secret; read when a delivery comes, never kept in the plan. */
  readonly secretEnv: string;
  /** hmac-sha256: the signature's header, lower case. */
  readonly header?: string;
  /** hmac-sha256: the delivery id's header, lower case (absent: the body's SHA-256). */
  readonly idHeader?: string;
  /** stripe: how far the signed timestamp may be from the clock. */
  readonly toleranceMs: number;
  readonly maxBodyBytes: number;
  /** Where `path` and `secret_env` are in the file: for a path another chain declares too, a secret not set. */
  readonly pathLine: number;
  readonly pathCol: number;
  readonly secretLine: number;
  readonly secretCol: number;
}
