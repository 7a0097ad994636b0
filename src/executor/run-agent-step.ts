import type { PlanStep } from '../compiler/plan.js';
import { runAgent, type AgentHost, type AgentTarget } from '../llm/agent/index.js';
import type { AttemptContext } from './attempt-context.js';
import type { Run } from './run-chain.js';
import { stepFailure } from './step-error.js';
import { withTimeout } from './timeout.js';

// One attempt of an `agent` step: the loop of llm/agent, given this run as its host. Names the
// model may call resolve in the run's own tool set (the versions the run started with), then in
// the engine's chains; chains run as children of this run, so their events carry this step as
// parent. Tool calls go through executeToolCalls (each under its tool's timeout); their log lines
// are this step's, tagged with the call id. The step's `timeout` bounds the whole loop; the
// attempt's signal aborts the HTTP request and every call in flight.

export function runAgentStep(run: Run, step: PlanStep, args: Record<string, unknown>, ctx: AttemptContext, item: number | undefined): Promise<unknown> {
  const plan = step.agent!;
  const prompt = messageText(step, args, 'prompt');
  const system = args.system === undefined ? undefined : messageText(step, args, 'system');
  const host = agentHost(run, step, ctx, item);
  const work = runAgent({ plan, messages: { prompt, ...(system !== undefined ? { system } : {}) } }, host);
  return step.timeoutMs === undefined ? work : withTimeout(work, ctx, step.timeoutMs);
}

/** A resolved `prompt` or `system`: text as is, other values as JSON; nothing at all is this step's validation failure. */
function messageText(step: PlanStep, args: Record<string, unknown>, key: 'prompt' | 'system'): string {
  const value = args[key];
  if (value === undefined || value === null) {
    const source = step.input.sources[key];
    throw stepFailure('VALIDATION_FAILED', `step '${step.name}': agent ${key}${source !== undefined ? ` from ${source}` : ''} matched nothing`);
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function agentHost(run: Run, step: PlanStep, ctx: AttemptContext, item: number | undefined): AgentHost {
  const tools = run.bound.tools;
  // Events of an attempt that was aborted (timeout, run stopped) would land after its step's end.
  const live = (): boolean => run.onEvent !== undefined && !ctx.aborted && run.isLive(step.index);
  const base = () => ({ run_id: run.id, chain: run.plan.name, timestamp: run.clock.now(), parent: run.parent, step: step.name, index: step.index, attempt: ctx.attempt, item });
  return {
    signal: ctx.signal,
    runId: run.id,
    step: step.name,
    approve: run.approve,
    now: () => run.clock.now(),
    env: (name) => process.env[name],
    resolve(name): AgentTarget | undefined {
      const tool = tools.get(name);
      if (tool) return { kind: 'tool', name, tool };
      const plan = run.host.chain(name);
      return plan ? { kind: 'chain', name, plan } : undefined;
    },
    // The host lends chains by name only, so hints name the tools that exist.
    knownNames: () => tools.names(),
    runChain: (plan, input, signal) => run.runChild(plan, input, signal, step.name),
    log: (entry) => run.host.log({ ...entry, step: step.name, attempt: ctx.attempt, fields: { ...entry.fields, tool_call_id: entry.step } }),
    onTurn(turn) {
      if (live()) run.emit({ type: 'agent:turn', ...base(), ...turn });
    },
    onToolCall(call) {
      if (live()) run.emit({ type: 'agent:tool_call', ...base(), ...call });
    },
  };
}
