import { CallFailure, type CallContext, type Callee, type CallSite } from '../call/index.js';
import { ToolchainError } from '../common/errors.js';
import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { MAX_SUBCHAIN_DEPTH } from '../compiler/subchain-graph.js';
import { agentMessagesPrepare, type AgentMessages } from './agent-step.js';
import { agentHost } from './agent-host.js';
import { stepSite } from './call-sites.js';
import type { Run } from './run.js';
import { waitCallee } from './wait-step.js';
import type { ExecutorHost, RunResult, StepMocks } from './types.js';

// What a `chain:` or `agent:` step calls, as a Callee of the call unit, so that these steps get
// the same attempts, timeouts, retries and fallbacks as tool steps. Both are children of the run
// that calls them, so their sites are made per run (call-sites.ts binds the tool steps).

const NO_ENV: Readonly<Record<string, string | undefined>> = Object.freeze({});

export function childSite(run: Run, step: PlanStep): CallSite {
  const target = step.target;
  const callee =
    target.kind === 'chain'
      ? chainCallee(run.host, target.chain, (plan, input, ctx) => {
          // Chains can change while the engine runs (hot reload, addChain): the compiler's limit holds here too.
          if (run.depth >= MAX_SUBCHAIN_DEPTH) throw new CallFailure({ code: 'SUBCHAIN_TOO_DEEP', message: `chain '${plan.name}' would run ${run.depth + 1} levels of sub-chains deep; at most ${MAX_SUBCHAIN_DEPTH} are allowed` });
          return run.child(plan, input, ctx.signal, step.name, ctx.item === undefined ? step.name : `${step.name}[${ctx.item}]`);
        })
      : target.kind === 'agent'
        ? agentCallee(run, step)
        : target.kind === 'wait'
          ? waitCallee(run, step, target.wait)
          : undefined;
  if (callee === undefined) throw new Error(`executor bug: step '${step.name}' has no site`);
  return stepSite(step, callee, run.bound.fallbackTools[step.index]);
}

/** The site of a step whose callee a mock replaces, or undefined when it is not mocked. */
export function mockedSite(run: Run, step: PlanStep, mocks: StepMocks): CallSite | undefined {
  const callee = mocks.callee(step.name, run.bound.sites[step.index]?.callee);
  return callee === undefined ? undefined : stepSite(step, callee, run.bound.fallbackTools[step.index]);
}

/** How a chain callee starts a run of the chain (a child of a step's run, or a run of its own), for one attempt. */
export type StartRun = (plan: ChainPlan, input: Record<string, unknown>, ctx: CallContext) => Promise<RunResult>;

/**
 * A chain as something to call: its input is checked like a tool's arguments (a bad one is the
 * caller's VALIDATION_FAILED), and a call is a run of it, started by `startRun`.
 */
export function chainCallee(host: Pick<ExecutorHost, 'chain' | 'checkInput'>, name: string, startRun: StartRun): Callee {
  return {
    describe: `chain '${name}'`,
    qualifiedName: name,
    dangerous: false,
    env: () => NO_ENV,
    prepare(args) {
      const plan = host.chain(name);
      if (plan === undefined) return { ok: true, args };
      const checked = host.checkInput(plan, args);
      return checked.ok ? { ok: true, args: checked.input } : { ok: false, problems: checked.problems };
    },
    async invoke(args, ctx) {
      // A sub-chain starts as a task of its own, not inside its caller's stack frames: nesting
      // depth must not grow the stack (a deep nesting overflowed it).
      await Promise.resolve();
      const plan = host.chain(name);
      if (plan === undefined) throw new ToolchainError('CHAIN_NOT_FOUND', `chain '${name}' is not loaded`);
      return outputsOf(plan, await startRun(plan, args, ctx));
    },
  };
}

/** A sub-run's outputs, or its failure as the calling step's (with the step it failed at). */
function outputsOf(plan: ChainPlan, result: RunResult): unknown {
  if (result.status === 'succeeded') return result.outputs;
  const e = result.error ?? { code: 'TOOL_ERROR', message: 'the run failed' };
  // Said once, by the level that hit the limit, rather than wrapped by each of 64 callers; a
  // sub-chain parked on a wait parks its step.
  if (e.code === 'SUBCHAIN_TOO_DEEP' || e.code === 'RUN_WAITING') throw new CallFailure({ code: e.code, message: e.message });
  const failed = `chain '${plan.name}' failed${e.step !== undefined ? ` at step '${e.step}'` : ''}: ${e.message}`;
  if (result.status === 'compensation_failed') {
    const undone = Object.entries(result.steps).filter(([k, s]) => k.endsWith('~compensate') && s.status === 'failed').map(([k]) => `'${k}'`);
    throw new CallFailure({ code: 'COMPENSATION_FAILED', message: `${failed}; and its compensations ${undone.join(', ')} failed` });
  }
  throw new CallFailure({ code: e.code, message: failed });
}

function agentCallee(run: Run, step: PlanStep): Callee {
  const target = step.target;
  if (target.kind !== 'agent') throw new Error(`executor bug: step '${step.name}' is not an agent`);
  const runner = run.host.agents;
  return {
    describe: `agent '${target.agent.model}'`,
    qualifiedName: step.name,
    dangerous: false,
    env: () => NO_ENV,
    prepare: agentMessagesPrepare,
    invoke(args, ctx) {
      if (runner === undefined) {
        return Promise.reject(new ToolchainError('USAGE', 'agent steps need a language-model runner, and this engine has none'));
      }
      return runner({ plan: target.agent, messages: args as unknown as AgentMessages }, agentHost(run, step, ctx));
    },
  };
}
