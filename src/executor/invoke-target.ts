import type { PlanStep } from '../compiler/plan.js';
import { ToolchainError } from '../common/errors.js';
import { checkApproval } from '../registry/approval.js';
import type { Tool } from '../registry/types.js';
import type { AttemptContext } from './attempt-context.js';
import { runAgentStep } from './run-agent-step.js';
import type { Run } from './run-chain.js';
import { stepFailure } from './step-error.js';
import { withTimeout } from './timeout.js';

// One call of a step's target with prepared arguments: a tool (after approval when it is
// dangerous, SPEC §3.4), a sub-chain run through the same engine, or an agent's loop. The timeout
// covers the call, not the wait for a human's approval.

export function invokeTarget(run: Run, step: PlanStep, tool: Tool | undefined, args: Record<string, unknown>, ctx: AttemptContext, item?: number): Promise<unknown> {
  if (tool === undefined) return step.kind === 'agent' ? runAgentStep(run, step, args, ctx, item) : runSubChain(run, step, args, ctx);
  const timeoutMs = step.timeoutMs ?? tool.timeoutMs;
  if (!tool.dangerous) return call(tool, args, ctx, timeoutMs);
  return checkApproval(tool, run.approve, { args, step: step.name, run_id: run.id }).then(() => {
    // The run may have stopped while a human was deciding.
    if (ctx.aborted) throw ctx.abortReason!;
    return call(tool, args, ctx, timeoutMs);
  });
}

function call(tool: Tool, args: Record<string, unknown>, ctx: AttemptContext, timeoutMs: number | undefined): Promise<unknown> {
  let work: Promise<unknown>;
  try {
    work = tool.invoke(args, ctx);
  } catch (error) {
    // Tool.invoke promises to reject rather than throw; a foreign ToolSet may not keep that promise.
    return Promise.reject(error as Error);
  }
  return timeoutMs === undefined ? work : withTimeout(work, ctx, timeoutMs);
}

function runSubChain(run: Run, step: PlanStep, args: Record<string, unknown>, ctx: AttemptContext): Promise<unknown> {
  const plan = run.host.chain(step.target);
  if (plan === undefined) {
    return Promise.reject(new ToolchainError('CHAIN_NOT_FOUND', `step '${step.name}' runs chain '${step.target}', which is not loaded`));
  }
  const work = run.runChild(plan, args, ctx.signal, step.name).then((result) => {
    if (result.status === 'succeeded') return result.outputs;
    const e = result.error!;
    // The sub-chain's input is this step's arguments: a bad one is this step's validation failure.
    const code = e.code === 'INPUT_INVALID' ? 'VALIDATION_FAILED' : e.code;
    throw stepFailure(code, `sub-chain '${plan.name}' failed${e.step !== undefined ? ` at step '${e.step}'` : ''}: ${e.message}`);
  });
  return step.timeoutMs === undefined ? work : withTimeout(work, ctx, step.timeoutMs);
}
