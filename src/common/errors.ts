import { printable } from './printable.js';

// Diagnostics are data: a closed set of codes, a place in a file, and a message. Only the CLI
// turns them into `FILE:LINE:COL CODE message` lines; tests assert codes and positions.

/**
 * Every code the engine itself produces, with what it means for whoever started the work:
 * - `definition`: a chain, manifest or plugin is wrong (fix the file; the CLI exits 2);
 * - `usage`: the request is wrong — unknown chain, bad input, bad option (exit 2);
 * - `run`: the work was tried and failed (exit 1);
 * - `cancelled`: the caller stopped it (exit 130 after Ctrl-C).
 * The table is the union: adding a code means saying what kind it is.
 */
export const ERROR_KINDS = {
  // loading
  FILE_UNREADABLE: 'definition',
  FILE_TOO_LARGE: 'definition',
  YAML_SYNTAX: 'definition',
  YAML_LIMIT: 'definition',
  YAML_DUPLICATE_KEY: 'definition',
  YAML_MULTI_DOCUMENT: 'definition',
  FORBIDDEN_KEY: 'definition',
  // chain shape
  SCHEMA_INVALID: 'definition',
  UNSUPPORTED_PATTERN: 'definition',
  UNKNOWN_KEY: 'definition',
  MISSING_KEY: 'definition',
  BAD_TYPE: 'definition',
  BAD_VALUE: 'definition',
  BAD_NAME: 'definition',
  BAD_DURATION: 'definition',
  DUPLICATE_NAME: 'definition',
  DUPLICATE_CHAIN: 'definition',
  NAME_COLLISION: 'definition',
  // references and graph
  UNKNOWN_REFERENCE: 'definition',
  UNKNOWN_STEP: 'definition',
  FORWARD_REFERENCE: 'definition',
  SELF_DEPENDENCY: 'definition',
  CHAIN_CYCLE: 'definition',
  SUBCHAIN_CYCLE: 'definition',
  SUBCHAIN_TOO_DEEP: 'definition',
  UNKNOWN_TOOL: 'definition',
  UNKNOWN_CHAIN: 'definition',
  // data flow: what a step gives a tool against what the tool takes
  UNKNOWN_PARAMETER: 'definition',
  /** A warning: a key the tool's schema does not declare, which it lets through (additionalProperties open). */
  UNDECLARED_PARAMETER: 'definition',
  MISSING_PARAMETER: 'definition',
  TYPE_MISMATCH: 'definition',
  UNKNOWN_FIELD: 'definition',
  LITERAL_JSONPATH: 'definition',
  // chain tests
  TEST_INVALID: 'usage',
  // expressions
  BAD_JSONPATH: 'definition',
  BAD_TEMPLATE: 'definition',
  BAD_EXPRESSION: 'definition',
  // plugins
  PLUGIN_INVALID: 'definition',
  PLUGIN_DUPLICATE: 'definition',
  PLUGIN_REQUIREMENT: 'definition',
  PLUGIN_CYCLE: 'definition',
  HANDLER_ESCAPE: 'definition',
  HANDLER_LOAD: 'definition',
  BAD_SEMVER: 'definition',
  // starting a run
  CHAIN_NOT_FOUND: 'usage',
  INPUT_INVALID: 'usage',
  TOOL_NOT_FOUND: 'usage',
  USAGE: 'usage',
  /** An optional package a feature needs (pg, fastify, …) is not installed. */
  PACKAGE_MISSING: 'usage',
  // running
  VALIDATION_FAILED: 'run',
  RESULT_INVALID: 'run',
  RESULT_TOO_LARGE: 'run',
  /** A for_each selected more elements than the engine's limit (serve's `for-each-elements`). */
  FOR_EACH_TOO_LARGE: 'run',
  /** A `repeat` step ran its last round (max_attempts) and its `until` was still false. */
  REPEAT_EXHAUSTED: 'run',
  TOOL_ERROR: 'run',
  TIMEOUT: 'run',
  RUN_TIMEOUT: 'run',
  APPROVAL_DENIED: 'run',
  CIRCUIT_OPEN: 'run',
  TOOL_CRASHED: 'run',
  TOOL_STALLED: 'run',
  /** A tool's server (an MCP server) is down, starting or reconnecting: worth retrying. */
  TOOL_UNAVAILABLE: 'run',
  /** An HTTP API (an OpenAPI operation) answered 4xx other than 429: the request was wrong. */
  HTTP_4XX: 'run',
  /** An HTTP API answered 429 Too Many Requests: worth retrying after a wait. */
  HTTP_429: 'run',
  /** An HTTP API answered 5xx: worth retrying. */
  HTTP_5XX: 'run',
  ABORTED: 'cancelled',
  // the run store and durable runs
  STORE_URL: 'usage',
  STORE_TOO_NEW: 'usage',
  STORE_CORRUPT: 'usage',
  STORE_UNAVAILABLE: 'run',
  STORE_WRITE_FAILED: 'run',
  STORE_FENCED: 'run',
  RUN_NOT_FOUND: 'usage',
  RUN_IN_PROGRESS: 'usage',
  RUN_ID_CONFLICT: 'usage',
  CHAIN_CHANGED: 'definition',
  /** A re-run of a run that has not ended (running, interrupted, waiting). */
  RUN_NOT_FINISHED: 'usage',
  /** A step named (a re-run's `from`) that the chain does not have. */
  STEP_NOT_FOUND: 'usage',
  /** A re-run replaces an input that a step it keeps read. */
  RERUN_INPUT_READ: 'usage',
  // the queue of runs
  QUEUE_URL: 'usage',
  QUEUE_UNAVAILABLE: 'run',
  QUEUE_JOB_FAILED: 'run',
  /** Not a failure: a run parked at a distributed for_each until workers have run its elements. */
  RUN_SUSPENDED: 'run',
  // runs that wait
  /** Not a failure: a run with nothing left but waits, parked until one is over; also `resume` of such a run before then. */
  RUN_WAITING: 'usage',
  /** A `wait_for` step's event did not come within its timeout. */
  WAIT_TIMEOUT: 'run',
  /** An approval request or an event that is not (or no longer) there to decide or send to. */
  APPROVAL_NOT_FOUND: 'usage',
  /** The decider is not among the approvers the request names, or the request was decided already. */
  APPROVAL_REFUSED: 'usage',
  // runs that start on their own (triggers)
  /** A trigger's cron expression is not one: the field, and what it allows. */
  BAD_CRON: 'definition',
  /** A trigger's `timezone` is no IANA time zone this Node knows. */
  UNKNOWN_TIMEZONE: 'definition',
  /** A trigger with both or neither of `schedule` and `every`, an interval that is not whole seconds, or an id used twice. */
  BAD_TRIGGER: 'definition',
  /** A trigger's `input` or `input_map` does not fit the chain's inputs. */
  TRIGGER_INPUT: 'definition',
  /** Pausing or resuming a trigger that no loaded chain has (`CHAIN#ID`), or a chain that declares none. */
  TRIGGER_NOT_FOUND: 'usage',
  /** A webhook delivery to a trigger someone paused: refused, nothing recorded (the sender may deliver it again). */
  TRIGGER_PAUSED: 'usage',
  /** No enabled webhook trigger of the loaded chains has the path a delivery was sent to. */
  WEBHOOK_NOT_FOUND: 'usage',
  /** A webhook delivery whose signature is missing or does not match its body (or whose Stripe timestamp is too far off). */
  WEBHOOK_SIGNATURE: 'usage',
  /** A webhook trigger's secret variable is not set where deliveries are received (a warning in validate and at serve start). */
  WEBHOOK_SECRET_MISSING: 'usage',
  /** A signed webhook delivery that is not what its signature kind sends (a Stripe body without an event id). */
  WEBHOOK_BAD_DELIVERY: 'usage',
  // failure handling: on_failure, finally, compensate
  /** An on_failure or finally step that would wait (sleep, sleep_until, wait_for, approval). */
  HANDLER_CANNOT_WAIT: 'definition',
  /** `compensate` where there is nothing to undo: on a waiting step, or on an on_failure or finally step. */
  COMPENSATE_NOT_ALLOWED: 'definition',
  /** A sub-chain's run failed and one of its compensations failed too (its status compensation_failed). */
  COMPENSATION_FAILED: 'run',
  // a model endpoint (agent steps)
  MODEL_ERROR: 'run',
  RATE_LIMITED: 'run',
  MODEL_AUTH: 'run',
  MODEL_REJECTED: 'run',
  MODEL_UNREACHABLE: 'run',
  MODEL_ADDRESS_REFUSED: 'run',
  MODEL_KEY_REFUSED: 'run',
  MODEL_REPLY_TOO_LARGE: 'run',
} as const satisfies Record<string, ErrorKind>;

export type ErrorKind = 'definition' | 'usage' | 'run' | 'cancelled';

/** The closed set of the engine's own codes. */
export type ErrorCode = keyof typeof ERROR_KINDS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_KINDS, code);
}

declare const handlerCodeBrand: unique symbol;

/**
 * A code a tool's handler chose (`RATE_LIMITED`, `ENOENT`, `HTTP_ERROR`): any string, which
 * `retry_on` may name and step errors carry as they are. Branded so that it never passes for one
 * of the engine's codes by accident; `failureCode` is the one way to make one.
 */
export type HandlerCode = string & { readonly [handlerCodeBrand]: true };

/** The code of a failed step or call: the engine's, or the handler's own. */
export type FailureCode = ErrorCode | HandlerCode;

/** A code read from outside the engine (a handler's error, `retry_on`, a stored record). */
export function failureCode(code: string): FailureCode {
  return isErrorCode(code) ? code : (code as HandlerCode); // the brand's one constructor
}

/**
 * What a handler throws to fail with a code of its own. Any Error with a string `code` (Node's
 * `ENOENT` errors, say) is read the same way; this class is for handlers that want to be explicit.
 */
export class HandlerError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'HandlerError';
    this.code = code;
  }
}

/**
 * What a failed step or call records: a code and a one-line message, which in general does not
 * repeat the step's own name (whoever shows it knows which step it is; VALIDATION_FAILED names it
 * first, for a log reader). Plain data, so it can be stored and sent as JSON.
 */
export interface StepError {
  readonly code: FailureCode;
  readonly message: string;
  /** A handler's own stack, with its file and line; only in runs made with `debug` (`--debug`). */
  readonly stack?: string;
}

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  readonly code: ErrorCode;
  readonly severity: Severity;
  readonly message: string;
  /** Path of the file the problem is in, as the user named it. */
  readonly file?: string;
  /** RFC 6901 pointer to the offending node (`/steps/2/input_map/city`). */
  readonly pointer?: string;
  /** 1-based line and column of the offending node. */
  readonly line?: number;
  readonly col?: number;
  /** The closest valid name, when the problem is a misspelling. */
  readonly suggestion?: string;
  /** For a problem inside a string (a JSONPath, a template, a condition): its 0-based offset in that string. */
  readonly offset?: number;
}

/** An error a user caused, carrying a code tests can assert on and, when it has them, diagnostics. */
export class ToolchainError extends Error {
  readonly code: ErrorCode;
  readonly diagnostics: readonly Diagnostic[];

  constructor(code: ErrorCode, message: string, diagnostics: readonly Diagnostic[] = []) {
    super(message);
    this.name = 'ToolchainError';
    this.code = code;
    this.diagnostics = diagnostics;
  }
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** `FILE:LINE:COL CODE message` — the one line format of the CLI and of thrown compile errors. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file ? `${d.file}:${d.line ?? 1}:${d.col ?? 1} ` : '';
  return printable(`${where}${d.code} ${d.message}`);
}

/**
 * The closest candidate by edit distance, if it is close enough to be a plausible typo
 * (at most a third of the name's length, and never more than 3 edits).
 */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  for (const candidate of candidates) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // A one-letter name is "close" to every other one-letter name: require something in common.
  return bestDistance <= limit && bestDistance < name.length ? best : undefined;
}

/** Candidates sorted by closeness, for "unknown tool; closest: a, b, c" answers. */
export function closestNames(name: string, candidates: Iterable<string>, count = 3): string[] {
  // Words in a different order (`time_local` for `local_time`) are far apart by edits but plainly
  // meant: each shared word counts as much as several matching letters.
  const words = new Set(name.toLowerCase().split(/[_\-/.]/));
  return [...candidates]
    .map((c) => {
      const shared = c.toLowerCase().split(/[_\-/.]/).filter((w) => w && words.has(w)).length;
      return { c, d: editDistance(name.toLowerCase(), c.toLowerCase()) - 4 * shared };
    })
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, count)
    .map((x) => x.c);
}

function editDistance(a: string, b: string): number {
  // Damerau (optimal string alignment) distance: a swapped pair of letters counts as one typo.
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
}

/** What kind of JSON value arrived, for "expected X, got Y" messages: `an array`, `null`, `nothing`. */
export function describeKind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function suggestionSuffix(suggestion: string | undefined): string {
  return suggestion ? ` (did you mean '${suggestion}'?)` : '';
}
