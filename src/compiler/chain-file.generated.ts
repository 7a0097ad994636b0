// Generated from schemas/chain.schema.json by `npm run gen:types`. Do not edit by hand.

/**
 * A JSON Schema type name, or a full JSON Schema.
 */
export type Input =
  | TypeName
  | {
      /**
       * The JSON Schema type: a type name, "null", or a list of them.
       */
      type?: TypeName | 'null' | string[];
      /**
       * What the input is; shown to people and to language models.
       */
      description?: string;
      /**
       * The value used when the input is not given; an input without a default is required.
       */
      default?: {
        [k: string]: unknown;
      };
    };
export type TypeName = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
/**
 * A JSONPath (starts with $), a template ({{ $.path }} inside a string), `$$` for a literal dollar, any other literal, or an object or array of these.
 */
export type MappedValue = unknown;
/**
 * A letter or underscore, then letters, digits and underscores.
 */
export type Name = string;
/**
 * How to undo what the step did, should the run fail later: a tool or a chain, run after on_failure, in the reverse order of completion of the steps that succeeded. Its input_map reads `$.this` (the step's output), `$.this_input` (its resolved input_map) and the run.
 */
export type Compensate =
  | {
      tool: string;
      chain?: undefined;
      input_map?: {[k: string]: MappedValue};
      retry?: Retry;
      timeout?: number | string;
    }
  | {
      chain: string;
      tool?: undefined;
      input_map?: {[k: string]: MappedValue};
      retry?: Retry;
      timeout?: number | string;
    };
/**
 * Exactly one of `tool`, `chain`, `agent`, `sleep`, `sleep_until`, `wait_for` or `approval`.
 */
export type StepKind =
  | {
      tool: string;
      chain?: undefined;
      agent?: undefined;
      sleep?: undefined;
      sleep_until?: undefined;
      wait_for?: undefined;
      approval?: undefined;
    }
  | {
      chain: string;
      tool?: undefined;
      agent?: undefined;
      sleep?: undefined;
      sleep_until?: undefined;
      wait_for?: undefined;
      approval?: undefined;
    }
  | {
      agent: Agent;
      tool?: undefined;
      chain?: undefined;
      sleep?: undefined;
      sleep_until?: undefined;
      wait_for?: undefined;
      approval?: undefined;
    }
  | {
      sleep: number | string;
      tool?: undefined;
      chain?: undefined;
      agent?: undefined;
      sleep_until?: undefined;
      wait_for?: undefined;
      approval?: undefined;
    }
  | {
      sleep_until: unknown;
      tool?: undefined;
      chain?: undefined;
      agent?: undefined;
      sleep?: undefined;
      wait_for?: undefined;
      approval?: undefined;
    }
  | {
      wait_for: WaitFor;
      tool?: undefined;
      chain?: undefined;
      agent?: undefined;
      sleep?: undefined;
      sleep_until?: undefined;
      approval?: undefined;
    }
  | {
      approval: Approval;
      tool?: undefined;
      chain?: undefined;
      agent?: undefined;
      sleep?: undefined;
      sleep_until?: undefined;
      wait_for?: undefined;
    };

/**
 * A chain: typed inputs, steps that call tools, other chains or a language model, and outputs.
 */
export interface ToolchainChain {
  /**
   * The chain's name, unique across the chains folder.
   */
  name: string;
  /**
   * The chain's own version (free text; semver recommended).
   */
  version?: string;
  /**
   * What the chain does; shown to people and to language models.
   */
  description?: string;
  /**
   * Inputs by name: a JSON Schema type name, or a full JSON Schema. An input without `default` is required.
   */
  inputs?: {
    [k: string]: Input;
  };
  /**
   * The steps, in file order. A step waits for every step above it unless it says `parallel: true`.
   *
   * @minItems 1
   */
  steps: [Step & StepKind, ...(Step & StepKind)[]];
  /**
   * Steps run when the run fails, after its steps have ended and before the compensations. They read `$.error` ({ code, message, step }), the outputs of the steps that succeeded and the inputs. Their own failures are recorded and counted but do not change the run's status.
   *
   * @minItems 1
   */
  on_failure?: [Step & StepKind, ...(Step & StepKind)[]];
  /**
   * Steps run after the run has ended, whatever its status (after on_failure and the compensations). They read `$.status` (succeeded, failed, compensation_failed or cancelled), `$.error` when there is one, the steps' outputs and the inputs. A failing finally step does not stop the others, nor change the run's status.
   *
   * @minItems 1
   */
  finally?: [
    Step &
      StepKind & {
        /**
         * A finally step's failure never stops the others: `continue` (the default) is the only value.
         */
        on_error?: 'continue';
      },
    ...(Step &
      StepKind & {
        /**
         * A finally step's failure never stops the others: `continue` (the default) is the only value.
         */
        on_error?: 'continue';
      })[]
  ];
  /**
   * Outputs by name: a JSONPath, a template or a literal. Without it, the output of the last step that ran.
   */
  outputs?: {
    [k: string]: MappedValue;
  };
  /**
   * Most steps of one run running at once.
   */
  concurrency?: number;
  /**
   * Deadline of the whole run.
   */
  timeout?: number | string;
  /**
   * When the chain runs on its own: on a cron schedule, at a fixed interval, on an event, or on a signed webhook. Fired by serve, worker and watch (webhooks by serve); one run per tick, event or delivery however many processes share the store. Not part of the chain's content hash.
   */
  triggers?: Trigger[];
}
export interface Step {
  /**
   * A letter or underscore, then letters, digits and underscores.
   */
  name: string;
  /**
   * A tool name, optionally plugin/tool.
   */
  tool?: string;
  /**
   * A letter or underscore, then letters, digits and underscores.
   */
  chain?: string;
  agent?: Agent;
  /**
   * Wait this long, then succeed with { slept_until }. Any length (30s, 2h, 3d, 2w): the run is parked in the run store meanwhile, holding no process.
   */
  sleep?: number | string;
  /**
   * Wait until this time (an ISO 8601 timestamp, a JSONPath or a template giving one), then succeed with { slept_until }.
   */
  sleep_until?: unknown;
  wait_for?: WaitFor;
  approval?: Approval;
  /**
   * What the step does; for people reading the chain.
   */
  description?: string;
  /**
   * The tool's arguments: JSONPaths, templates and literals.
   */
  input_map?: {
    [k: string]: MappedValue;
  };
  /**
   * Steps to wait for besides those the input_map reads.
   */
  depends_on?: Name[];
  /**
   * Do not wait for the steps above; wait only for what is referenced or in depends_on.
   */
  parallel?: boolean;
  /**
   * A condition; when false the step is skipped. JSONPaths, literals (numbers, quoted strings, true, false, null, lists such as ['JP', 'FR']), == != < <= > >= && || ! ( ) in.
   */
  when?: string;
  /**
   * Deadline of one attempt.
   */
  timeout?: number | string;
  retry?: Retry;
  fallback?: Fallback1;
  repeat?: Repeat;
  /**
   * Run once per element of this array ($.item, $.index).
   */
  for_each?: string;
  /**
   * With for_each: most elements at once.
   */
  max_concurrency?: number;
  /**
   * With for_each on a tool step, run by workers (toolchain worker): each element becomes a job any worker can take; the run waits without holding a worker. Without a queue, the elements run here as usual.
   */
  distribute?: boolean;
  /**
   * fail (default) stops the run; continue records { error } as the output.
   */
  on_error?: 'fail' | 'continue';
  compensate?: Compensate;
}
/**
 * A language-model agent: a loop against an OpenAI-compatible chat endpoint that may call the listed tools and chains.
 */
export interface Agent {
  /**
   * The API root of an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1; requests go to {base_url}/chat/completions.
   */
  base_url: string;
  /**
   * The model name sent with every request.
   */
  model: string;
  /**
   * Environment variable holding the API key, sent as `Authorization: Bearer <key>`. Omit for endpoints without authentication.
   */
  api_key_env?: string;
  /**
   * The system message: literal text, a JSONPath or a template.
   */
  system?: string;
  /**
   * The user message: literal text, a JSONPath or a template.
   */
  prompt: string;
  /**
   * Tools (name or plugin/name) and chains the model may call.
   */
  tools?: string[];
  /**
   * Most model responses in one attempt (default 10).
   */
  max_turns?: number;
  /**
   * Stop after this many failed tool calls in a row (default 3).
   */
  max_failures?: number;
  /**
   * Stop once the total tokens the endpoint reports exceed this.
   */
  budget_tokens?: number;
  /**
   * auto (default): when the endpoint returns no tool_calls but the reply's text holds calls in a known format (Hermes, Harmony, Mistral, Qwen3-Coder XML, …), they are read with the offered tools and executed. off: text is only text.
   */
  text_calls?: 'auto' | 'off';
}
/**
 * Wait for an event (engine.emit, toolchain emit, POST /api/events) whose payload matches; the step's output is the payload.
 */
export interface WaitFor {
  /**
   * The event's name (payment.settled).
   */
  event: string;
  /**
   * Each key must equal the event payload's value at that key: literals, JSONPaths and templates, resolved when the wait begins.
   */
  match?: {
    [k: string]: MappedValue;
  };
  /**
   * Then the step fails with WAIT_TIMEOUT (retry and on_error apply). Default: no timeout.
   */
  timeout?: number | string;
}
/**
 * Wait for a person to approve or deny; the output is { approved, by, comment, at }, and a denial fails the step with APPROVAL_DENIED.
 */
export interface Approval {
  /**
   * What the person is asked: text, or a template ({{ $.order.id }}).
   */
  prompt?: string;
  /**
   * Then the request is denied (APPROVAL_DENIED). Default: no timeout.
   */
  timeout?: number | string;
  /**
   * Who may decide (names as recorded: --by, the serve token's label, the OS user). Default: anyone who may decide.
   *
   * @minItems 1
   */
  approvers?: [string, ...string[]];
}
/**
 * Retry the step on failure: max_attempts, backoff, retry_on, fallback.
 */
export interface Retry {
  /**
   * Total attempts, the first included (at most 100).
   */
  max_attempts?: number;
  backoff?: Backoff;
  /**
   * Error codes to retry. Default: every error except validation errors and approval refusals.
   */
  retry_on?: string[];
  fallback?: Fallback;
}
/**
 * How long to wait between attempts.
 */
export interface Backoff {
  /**
   * The wait before the second attempt (default 1s).
   */
  initial?: number | string;
  /**
   * Each wait is the one before times this (default 2; at least 1).
   */
  factor?: number;
  /**
   * The longest wait between attempts (default 30s).
   */
  max?: number | string;
  /**
   * full (default): wait a uniformly random part of the delay, so retries of many runs spread out; none: wait exactly.
   */
  jitter?: 'none' | 'full';
}
/**
 * Tried once after the last attempt fails: input overrides, another tool, or a fixed output.
 */
export interface Fallback {
  /**
   * Overrides merged over the step's own input_map.
   */
  input_map?: {
    [k: string]: MappedValue;
  };
  /**
   * Another tool to call with the step's arguments.
   */
  tool?: string;
  /**
   * A fixed value used as the step's output.
   */
  output?: unknown;
}
/**
 * Tried once after the step fails for good, for a step without retry (under retry it is retry.fallback): input overrides, another tool, or a fixed output.
 */
export interface Fallback1 {
  /**
   * Overrides merged over the step's own input_map.
   */
  input_map?: {
    [k: string]: MappedValue;
  };
  /**
   * Another tool to call with the step's arguments.
   */
  tool?: string;
  /**
   * A fixed value used as the step's output.
   */
  output?: unknown;
}
/**
 * Polling: run the step, then again every `every` until `until` is true, at most max_attempts rounds (then REPEAT_EXHAUSTED). The run sleeps durably between rounds.
 */
export interface Repeat {
  /**
   * A condition (as in when) read after each round; $.this is the round's output. True: the step succeeds with that output.
   */
  until: string;
  /**
   * How long the run sleeps between the end of one round and the start of the next (a durable sleep).
   */
  every: number | string;
  /**
   * Most rounds (the first included); after the last one with until still false the step fails with REPEAT_EXHAUSTED.
   */
  max_attempts: number;
}
/**
 * One trigger: exactly one of `schedule` (cron), `every` (interval), `event` (an event name) and `webhook` (POST /hooks/PATH on serve).
 */
export interface Trigger {
  /**
   * A cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. Evaluated in `timezone`.
   */
  schedule?: string;
  /**
   * An IANA time zone for `schedule` (Europe/Paris); default UTC.
   */
  timezone?: string;
  /**
   * A fixed interval (30s, 15m, 1h, 1d), a whole number of seconds: ticks are the multiples of it since the Unix epoch.
   */
  every?: number | string;
  /**
   * An event name (order.created): each event of this name — engine.emit, toolchain emit, POST /api/events — whose payload meets `match` starts one run.
   */
  event?: string;
  /**
   * With `event`: each key must equal the event payload's value at that key (literals: a trigger has no run to read from).
   */
  match?: {
    /**
     * A literal: a string, number, boolean, null, list or map.
     */
    [k: string]: unknown;
  };
  webhook?: Webhook;
  /**
   * The trigger's id in its runs' ids (CHAIN#ID@TICK, CHAIN#ID@EVENT); default its 1-based position in the list.
   */
  id?: string;
  /**
   * The run's input, a literal object.
   */
  input?: {};
  /**
   * The run's input by name, read from `$.tick` ({ at, trigger }) for `schedule` and `every`, or from `$.event` for `event` ({ name, id, payload }) and `webhook` ({ name, id, type, payload, headers }).
   */
  input_map?: {
    [k: string]: MappedValue;
  };
  /**
   * Ticks or events missed while no process ran: `none`, `latest` (the newest one only; the default for ticks) or `all` (at most the newest 100; the default for events). Not for webhooks: their senders deliver again.
   */
  catchup?: 'none' | 'latest' | 'all';
  /**
   * A tick or an event that comes while the trigger's previous run is still going: `skip` (the default for ticks), `queue` (run it once that run ends) or `allow` (the default for events). Not for webhooks: each delivery starts its run.
   */
  overlap?: 'allow' | 'skip' | 'queue';
  /**
   * false: the trigger fires nothing.
   */
  enabled?: boolean;
}
/**
 * POST /hooks/PATH on serve starts one run per delivery, once its signature is verified.
 */
export interface Webhook {
  /**
   * The route's path after /hooks/ (github, billing/stripe): letters, digits, _ and -, segments split by /. One trigger of all loaded chains per path.
   */
  path: string;
  /**
   * How deliveries are signed: github (X-Hub-Signature-256), stripe (Stripe-Signature, with a timestamp) or hmac-sha256 (the hex HMAC-SHA256 of the body in `header`).
   */
  signature: 'github' | 'stripe' | 'hmac-sha256';
  /**
   * The environment variable of serve holding the signing secret (never one of toolchain's own TOOLCHAIN_* variables).
   */
  secret_env: string;
  /**
   * With hmac-sha256: the header holding the signature (X-Signature), hex, optionally after `sha256=`.
   */
  header?: string;
  /**
   * With hmac-sha256: the header holding the delivery id that makes redeliveries idempotent. Default: the SHA-256 of the body.
   */
  id_header?: string;
  /**
   * With stripe: how far the signed timestamp may be from the server's clock (default 300s).
   */
  tolerance?: number | string;
  /**
   * The largest body accepted, in bytes (default 1048576, 1 MiB); a larger one is refused with 413 before it is read.
   */
  max_body_bytes?: number;
}
