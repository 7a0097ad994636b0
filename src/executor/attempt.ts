import type { PlanStep } from '../compiler/plan.js';
import type { RunContext } from '../expr/types.js';
import type { Tool } from '../registry/types.js';
import { AttemptContext } from './attempt-context.js';
import { backoffDelay, isRetryable } from './backoff.js';
import type { FallbackKind } from './events.js';
import { invokeTarget } from './invoke-target.js';
import type { Run } from './run-chain.js';
import { stepFailure, toStepError, type StepError } from './step-error.js';
import { validationMessage } from './validation-message.js';

// One unit of work through all its attempts (SPEC §2.7): resolve the arguments from the run
// context, validate them once (the same arguments fail the same way every time), call, retry
// with backoff while the policy allows, then the fallback. The outcome goes to a sink: the run
// itself for a plain step, or the step's for_each group for one element. `key` is what the sink
// knows the work by (the step index, or the element index).

export interface AttemptSink {
  /** Registers the attempt's context so that a stopping run can abort it. */
  track(ctx: AttemptContext, key: number): void;
  /** False once the result would be dropped (the run stopped, or the for_each step already failed). */
  live(key: number): boolean;
  succeeded(key: number, output: unknown, attempts: number, fallback?: FallbackKind): void;
  failed(key: number, error: StepError, attempts: number): void;
}

/** Validated arguments for `tool`, or a VALIDATION_FAILED thrown with the step, keys and paths named. */
function prepareArgs(step: PlanStep, tool: Tool, args: Record<string, unknown>, sources: Readonly<Record<string, string>>): Record<string, unknown> {
  const prepared = tool.prepare(args);
  if (prepared.ok) return prepared.args;
  throw stepFailure('VALIDATION_FAILED', validationMessage(step, tool.qualifiedName, args, prepared.problems, sources));
}

function resolveArgs(step: PlanStep, scope: RunContext): Record<string, unknown> {
  try {
    return step.input.get(scope) as Record<string, unknown>;
  } catch (error) {
    throw stepFailure('VALIDATION_FAILED', `step '${step.name}': its input_map could not be resolved: ${(error as Error).message}`);
  }
}

export async function runAttempts(run: Run, i: number, scope: RunContext, sink: AttemptSink, key: number, item: number | undefined): Promise<void> {
  const step = run.steps[i]!;
  const tool = run.bound.stepTools[i];
  const policy = step.retry;
  const timed = run.onEvent !== undefined && (policy.maxAttempts > 1 || step.fallback !== undefined);
  let attempt = 0;
  let error: StepError | undefined;
  let lastDuration = 0;
  let args: Record<string, unknown> | undefined;
  let callArgs: Record<string, unknown> | undefined;
  try {
    args = resolveArgs(step, scope);
    callArgs = tool === undefined ? args : prepareArgs(step, tool, args, step.input.sources);
  } catch (thrown) {
    error = toStepError(thrown);
  }

  if (callArgs !== undefined) {
    for (;;) {
      attempt++;
      const ctx = new AttemptContext(run, step.name, attempt);
      sink.track(ctx, key);
      const began = timed ? run.clock.now() : 0;
      try {
        const output = await invokeTarget(run, step, tool, callArgs, ctx, item);
        return sink.succeeded(key, output, attempt);
      } catch (thrown) {
        error = toStepError(thrown);
      }
      if (!sink.live(key)) return;
      if (timed) lastDuration = run.clock.now() - began;
      if (attempt >= policy.maxAttempts || !isRetryable(policy, error.code)) break;
      const delay = backoffDelay(policy.backoff, attempt, run.host.random);
      run.retrying(i, attempt, error, lastDuration, delay, undefined, item);
      // The wait is the attempt context's timer, so stopping the run clears it; the run then
      // never resumes this function, which is simply dropped.
      await new Promise<void>((resolve) => ctx.setTimer(resolve, delay));
      if (!sink.live(key)) return;
    }
  }

  const fallback = step.fallback;
  if (fallback !== undefined) {
    if (fallback.input !== undefined || fallback.tool !== undefined) {
      const kind: FallbackKind = fallback.tool !== undefined ? 'tool' : 'input';
      run.retrying(i, attempt, error!, lastDuration, 0, kind, item);
      attempt++;
      try {
        const fallbackTool = fallback.tool !== undefined ? run.bound.fallbackTools[i] : tool;
        const overrides = fallback.input?.get(scope) as Record<string, unknown> | undefined;
        const merged = overrides !== undefined ? { ...args, ...overrides } : (args ?? {});
        const sources = fallback.input !== undefined ? { ...step.input.sources, ...fallback.input.sources } : step.input.sources;
        const prepared = fallbackTool === undefined ? merged : prepareArgs(step, fallbackTool, merged, sources);
        const ctx = new AttemptContext(run, step.name, attempt);
        sink.track(ctx, key);
        const output = await invokeTarget(run, step, fallbackTool, prepared, ctx, item);
        return sink.succeeded(key, output, attempt, kind);
      } catch (thrown) {
        error = toStepError(thrown);
      }
      if (!sink.live(key)) return;
    }
    if (fallback.hasOutput) return sink.succeeded(key, fallback.output, attempt, 'output');
  }
  sink.failed(key, error!, attempt);
}
