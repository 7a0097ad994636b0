import { randomUUID } from 'node:crypto';
import type { Engine } from '../../engine.js';
import { ToolchainError } from '../../common/errors.js';
import { toToolError } from '../../registry/handler-error.js';
import type { ToolSet } from '../../registry/types.js';
import { exportNames, type ExportedCallable, type ExportNames } from '../export/export-names.js';
import { dropNullOptionals } from '../export/null-optionals.js';
import { toArguments } from '../parse/call-shape.js';
import { callChain } from './call-chain.js';
import { failed, type CallOutcome } from './call-outcome.js';
import { callTool } from './call-tool.js';
import { checkExecuteOptions, type ExecuteOptions, type ExecuteSettings } from './execute-options.js';
import { unknownCallable } from './unknown-callable.js';
import { errorMessage, successMessage, type ToolMessage } from './tool-message.js';

// SPEC §4: a batch of a model's calls, run concurrently through the registry, each answered with a
// tool message carrying its id, in the order of the calls. A call's name is resolved the way the
// exporters named it (export-names.ts), so whatever a model was offered reaches its tool or chain.
// Every failure — unknown name, unreadable or invalid arguments, refusal, timeout, the tool's own
// error — is an answer with `is_error: true`; the returned promise rejects only for bad options.

/** What executeToolCalls needs of an engine. */
export type ExecutionEngine = Pick<Engine, 'tools' | 'chains' | 'run'>;

/** A call as parseToolCalls returns it; `arguments` may also be JSON text, and a missing id becomes `call_<position>`. */
export interface ToolCallInput {
  readonly id?: string;
  readonly name: string;
  readonly arguments?: Record<string, unknown> | string;
}

interface Batch {
  readonly engine: ExecutionEngine;
  readonly tools: ToolSet;
  readonly names: ExportNames;
  readonly runId: string;
  readonly options: ExecuteOptions;
  readonly settings: ExecuteSettings;
}

export async function executeToolCalls(engine: ExecutionEngine, calls: readonly ToolCallInput[], options: ExecuteOptions = {}): Promise<ToolMessage[]> {
  const settings = checkExecuteOptions(options);
  if (!Array.isArray(calls)) throw new ToolchainError('USAGE', 'executeToolCalls takes an array of calls');
  const tools = engine.tools();
  const batch: Batch = {
    engine,
    tools,
    names: exportNames({ tools, chains: engine.chains() }),
    runId: options.runId ?? randomUUID(),
    options,
    settings,
  };
  return Promise.all(calls.map((call, i) => answer(batch, call, i)));
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
    outcome = failed(toToolError(error, name), 0);
  }
  const max = batch.settings.maxResultChars;
  const message = outcome.ok ? successMessage(id, outcome.value, max) : errorMessage(id, outcome.code, outcome.message, max);
  try {
    batch.options.onCall?.({
      id,
      name,
      ...(callable ? { target: { kind: callable.kind, name: callable.target } } : {}),
      is_error: message.is_error,
      ...(outcome.ok ? {} : { code: outcome.code }),
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
  const parsed = toArguments(rawArgs);
  if (!parsed.ok) return failed({ code: 'VALIDATION_FAILED', message: `Invalid arguments for tool '${name}': ${parsed.message}` }, 0);
  const { options, settings } = batch;
  if (options.signal?.aborted) return failed({ code: 'ABORTED', message: `the call to '${name}' was cancelled before it started` }, 0);
  const args = dropNullOptionals(parsed.value, callable.parameters);
  if (callable.ref.kind === 'chain') {
    return callChain(batch.engine, callable.ref.chain, name, args, {
      signal: options.signal,
      approve: options.approve,
      timeoutMs: settings.timeoutMs,
      onEvent: options.onEvent,
    });
  }
  return callTool(callable.ref.tool, name, id, args, {
    runId: batch.runId,
    signal: options.signal,
    approve: options.approve,
    timeoutMs: settings.timeoutMs,
    retry: settings.retry,
    log: options.log,
  });
}
