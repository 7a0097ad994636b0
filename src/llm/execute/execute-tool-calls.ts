import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { callForOutcome, failedOutcome, type CallOutcome, type CallOwner, type CallSite } from '../../call/index.js';
import { systemClock } from '../../common/clock.js';
import { ToolchainError } from '../../common/errors.js';
import { formatProblems } from '../../registry/argument-problems.js';
import type { ToolSet } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import { exportNames, type ExportedCallable, type ExportNames } from '../export/export-names.js';
import { dropNullOptionals } from '../export/null-optionals.js';
import { toArguments } from '../parse/call-shape.js';
import { checkExecuteOptions, type ExecuteOptions, type ExecuteSettings } from './execute-options.js';
import { unknownCallable } from './unknown-callable.js';
import { errorMessage, successMessage, type ToolMessage } from './tool-message.js';

// A batch of a model's calls, run concurrently through the call unit, each answered with a
// tool message carrying its id, in the order of the calls. A call's name is resolved the way the
// exporters named it (export-names.ts), so whatever a model was offered reaches its tool or chain.
// Every failure — unknown name, unreadable or invalid arguments, refusal, timeout, the tool's own
// error — is an answer with `is_error: true`; the returned promise rejects only for bad options.

/** A call as parseToolCalls returns it; `arguments` may also be JSON text, and a missing id becomes `call_<position>`. */
export interface ToolCallInput {
  readonly id?: string;
  readonly name: string;
  readonly arguments?: Record<string, unknown> | string;
}

interface Batch {
  readonly targets: CallTargets;
  readonly tools: ToolSet;
  readonly names: ExportNames;
  readonly owner: CallOwner;
  readonly options: ExecuteOptions;
  readonly settings: ExecuteSettings;
}

export async function executeToolCalls(targets: CallTargets, calls: readonly ToolCallInput[], options: ExecuteOptions = {}): Promise<ToolMessage[]> {
  const settings = checkExecuteOptions(options);
  if (!Array.isArray(calls)) throw new ToolchainError('USAGE', 'executeToolCalls takes an array of calls');
  const tools = targets.tools();
  const runId = options.runId ?? randomUUID();
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const owner: CallOwner = {
    runId,
    clock,
    random: options.random ?? Math.random,
    approve: options.approve,
    ...(options.waits !== undefined && options.waitKey !== undefined ? { waits: options.waits, waitKey: options.waitKey } : {}),
    observed: options.watch !== undefined,
    idempotencyKey: (label) => `${runId}:${label}`,
    log: (label, attempt, message, fields) => log?.({ timestamp: clock.now(), run_id: runId, step: label, attempt, message, ...(fields ? { fields } : {}) }),
  };
  const batch: Batch = { targets, tools, names: exportNames({ tools, chains: targets.chains() }), owner, options, settings };
  // p-limit keeps the batch's order: calls start as places free up, first come first served.
  const limit = pLimit(settings.concurrency);
  return Promise.all(calls.map((call, i) => limit(() => answer(batch, call, i))));
}

async function answer(batch: Batch, call: ToolCallInput, position: number): Promise<ToolMessage> {
  const started = performance.now();
  const id = typeof call?.id === 'string' && call.id !== '' ? call.id : `call_${position + 1}`;
  const name = typeof call?.name === 'string' ? call.name : '';
  const callable = batch.names.resolve(name);
  let outcome: CallOutcome;
  try {
    outcome = await run(batch, callable, id, name, call?.arguments);
  } catch (error) {
    // Every path above answers with a value; this is for the unforeseen (a hostile ToolSet).
    outcome = failedOutcome({ code: 'TOOL_ERROR', message: `the call to '${name}' failed: ${(error as Error)?.message ?? String(error)}` });
  }
  const max = batch.settings.maxResultChars;
  const message = outcome.ok ? successMessage(id, outcome.value, max) : errorMessage(id, outcome.error.code, outcome.error.message, max);
  try {
    batch.options.onCall?.({
      id,
      name,
      ...(callable ? { target: { kind: callable.kind, name: callable.target } } : {}),
      is_error: message.is_error,
      ...(outcome.ok ? {} : { code: outcome.error.code }),
      attempts: outcome.attempts,
      duration_ms: performance.now() - started,
    });
  } catch {
    // A listener's exception is its own problem.
  }
  return message;
}

async function run(batch: Batch, callable: ExportedCallable | undefined, id: string, name: string, rawArgs: unknown): Promise<CallOutcome> {
  if (callable === undefined) return unknownCallable(batch.tools, batch.names, name);
  const { options, settings } = batch;
  const progress = options.watch?.({ id, name });
  const parsed = toArguments(rawArgs);
  if (!parsed.ok) {
    const outcome = failedOutcome({ code: 'VALIDATION_FAILED', message: `Invalid arguments for tool '${name}': ${parsed.message}` });
    progress?.finished(outcome);
    return outcome;
  }
  const ref = callable.ref;
  const chainOptions = { ...(options.approve ? { approve: options.approve } : {}), ...(options.onEvent ? { onEvent: options.onEvent } : {}) };
  const site: CallSite = {
    label: id,
    callee: ref.kind === 'chain' ? batch.targets.chainCallee(ref.chain, chainOptions) : ref.tool,
    retry: settings.retry,
    timeoutMs: settings.timeoutMs,
    // `name` is the name the model used: errors are worded with the name it has to correct.
    invalid: (_callee, _args, problems) => formatProblems(name, problems),
    fallback: undefined,
    fallbackOutput: undefined,
  };
  const outcome = await callForOutcome(batch.owner, site, dropNullOptionals(parsed.value, callable.parameters), {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(progress ? { onRetry: (report) => progress.retrying(report) } : {}),
  });
  progress?.finished(outcome);
  return outcome;
}
