import type { RetryPolicy } from '../../compiler/plan.js';
import { ToolchainError } from '../../common/errors.js';
import { backoffDelay, isRetryable } from '../../executor/backoff.js';
import { sleep, systemClock } from '../../common/clock.js';
import type { LogEntry } from '../../executor/types.js';
import { formatProblems } from '../../registry/argument-problems.js';
import { checkApproval } from '../../registry/approval.js';
import { toToolError } from '../../registry/handler-error.js';
import type { ApproveCallback, Tool } from '../../registry/types.js';
import { CallContext } from './call-context.js';
import { failed, type CallOutcome } from './call-outcome.js';
import { createDeadline } from './deadline.js';

// One call of a tool, as a step would make it: validate (defaults filled, strings coerced), ask
// for approval when the tool is dangerous (SPEC §3.4), then invoke through the registry (cache,
// circuit breaker, result checks) within the tool's own timeout, retrying when the policy says so.

export interface ToolCallSettings {
  readonly runId: string;
  readonly signal: AbortSignal | undefined;
  readonly approve: ApproveCallback | undefined;
  /** Replaces the tool's own timeout. */
  readonly timeoutMs: number | undefined;
  readonly retry: RetryPolicy;
  readonly log: ((entry: LogEntry) => void) | undefined;
}

function invoke(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
  try {
    return tool.invoke(args, ctx);
  } catch (error) {
    // Tool.invoke promises to reject rather than throw; a foreign ToolSet may not keep that promise.
    return Promise.reject(error as Error);
  }
}

/** `shownName` is the name the model used: errors are worded with the name it has to correct. */
export async function callTool(tool: Tool, shownName: string, id: string, args: Record<string, unknown>, settings: ToolCallSettings): Promise<CallOutcome> {
  const prepared = tool.prepare(args);
  if (!prepared.ok) return failed({ code: 'VALIDATION_FAILED', message: formatProblems(shownName, prepared.problems) }, 0);
  try {
    await checkApproval(tool, settings.approve, { args: prepared.args, step: id, run_id: settings.runId });
  } catch (error) {
    return failed(toToolError(error, shownName), 0);
  }
  const timeoutMs = settings.timeoutMs ?? tool.timeoutMs;
  const policy = settings.retry;
  for (let attempt = 1; ; attempt++) {
    const deadline = createDeadline(`tool '${shownName}'`, timeoutMs, settings.signal);
    const ctx = new CallContext(settings.runId, id, attempt, deadline.controller.signal, settings.log);
    let error: ToolchainError;
    try {
      return { ok: true, value: await deadline.race(invoke(tool, prepared.args, ctx)), attempts: attempt };
    } catch (thrown) {
      error = toToolError(thrown, shownName);
    }
    if (attempt >= policy.maxAttempts || !isRetryable(policy, error.code) || settings.signal?.aborted) return failed(error, attempt);
    try {
      await sleep(systemClock, backoffDelay(policy.backoff, attempt, Math.random), settings.signal);
    } catch {
      return failed(new ToolchainError('ABORTED', `the call to tool '${shownName}' was cancelled`), attempt);
    }
  }
}
