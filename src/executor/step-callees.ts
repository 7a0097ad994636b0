import { CallFailure, type CallContext, type Callee, type CallOutcome, type CallSite, type RunWaits } from '../call/index.js';
import { sleep } from '../common/clock.js';
import { ToolchainError } from '../common/errors.js';
import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { MAX_SUBCHAIN_DEPTH } from '../compiler/subchain-graph.js';
import { agentMessagesPrepare, type AgentHost, type AgentMessages, type AgentTarget, type ToolCallProgress } from './agent-step.js';
import { stepSite } from './call-sites.js';
import type { RunEvent } from '../run-model/events.js';
import type { Run } from './run.js';
import { waitCallee } from './wait-step.js';
import type { ExecutorHost, StepMocks } from './types.js';
import type { RunResult } from '../run-model/result.js';

// What a `chain:` or `agent:` step calls, as a Callee of the call unit, so that these steps get
// the same attempts, timeouts, retries and fallbacks as tool steps. Both are children of the run
// that calls them, so their sites are made per run (call-sites.ts binds the tool steps). An agent
// step's callee lends each attempt a host (agentHost, below): the run's tools and chains, its
// clock and approver, and where the loop's progress goes.

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

// What a run lends one attempt of an `agent` step (agent-step.ts). Names the model may call
// resolve in the run's own tool set (the versions the run started with), then in the engine's
// chains; chains run as children of this run, so their events carry this step as parent. Each
// tool call the model makes is reported as step events of `STEP›NAME` carrying the call's id and
// turn; its log lines are this step's, tagged with the call id. Nothing is reported once the
// attempt was aborted (its events would land after its step's end).

function agentHost(run: Run, step: PlanStep, ctx: CallContext): AgentHost {
  const tools = run.bound.tools;
  const item = ctx.item;
  const live = (): boolean => run.onEvent !== undefined && !ctx.aborted && run.live(step.index);
  const emit = (event: RunEvent): void => {
    if (live()) run.emit(event);
  };
  const base = () => ({ run_id: run.runId, chain: run.plan.name, timestamp: run.clock.now(), parent: run.parent, step: step.name, index: step.index, attempt: ctx.attempt, item });
  return {
    signal: ctx.signal,
    runId: run.runId,
    step: step.name,
    approve: run.approve,
    ...(run.waits !== undefined ? { waits: heldWaits(run.waits, run, ctx) } : {}),
    waitKey: (callId) => `${run.waitKey(step.name, item)}›${callId}`,
    clock: run.clock,
    random: run.random,
    env: (name) => process.env[name],
    resolve(name): AgentTarget | undefined {
      const tool = tools.get(name);
      if (tool) return { kind: 'tool', name, tool };
      const plan = run.host.chain(name);
      return plan ? { kind: 'chain', name, plan } : undefined;
    },
    // The host lends chains by name only, so hints name the tools that exist.
    knownNames: () => tools.names(),
    // A chain the model calls is not recorded step by step: the agent's attempt runs again as a whole.
    chainCallee: (plan) => chainCallee(run.host, plan.name, (p, input, call) => run.child(p, input, call.signal, step.name, undefined)),
    idempotencyKey: (callId) => run.idempotencyKey(`${step.name}›${callId}`, item),
    log: (entry) => run.host.log({ ...entry, step: step.name, attempt: ctx.attempt, fields: { ...entry.fields, tool_call_id: entry.step } }),
    onTurn: (turn) => emit({ type: 'agent:turn', ...base(), ...turn }),
    onToolCall: (call) => emit({ type: 'agent:tool_call', ...base(), ...call }),
    toolCall: (call) => toolCallProgress(run, step, item, call, emit),
  };
}

/** How often a turn's call that waits for a decision looks at its request. */
const DECISION_POLL_MS = 500;

/**
 * An agent's turn cannot be parked and resumed half-way (its model calls are not recorded one by
 * one), so a call of it that needs a person's decision waits here, in the process, looking at its
 * request in the store until it is decided — while the turn's other calls go on. If the process
 * dies meanwhile, the agent step runs again from its first turn, as any step that did not finish.
 */
function heldWaits(waits: RunWaits, run: Run, ctx: CallContext): RunWaits {
  return {
    async wait(ask) {
      for (;;) {
        const answer = await waits.wait(ask);
        if (answer.over) return answer;
        await sleep(run.clock, DECISION_POLL_MS, ctx.signal);
      }
    },
  };
}

/** Step events of one tool call the model made: `STEP›NAME`, started → (retrying)* → succeeded | failed. */
function toolCallProgress(
  run: Run,
  step: PlanStep,
  item: number | undefined,
  call: { readonly id: string; readonly name: string; readonly turn: number },
  emit: (event: RunEvent) => void,
): ToolCallProgress {
  const where = () => ({
    run_id: run.runId,
    chain: run.plan.name,
    timestamp: run.clock.now(),
    parent: run.parent,
    step: `${step.name}›${call.name}`,
    index: step.index,
    item,
    call: { id: call.id, turn: call.turn },
    phase: run.phase,
  });
  const started = run.clock.now();
  emit({ type: 'step:started', ...where(), timestamp: started, attempt: 1 });
  return {
    retrying(r) {
      emit({ type: 'step:retrying', ...where(), attempt: r.attempt, error: r.error, duration_ms: r.duration_ms, delay_ms: r.delay_ms, fallback: r.fallback });
    },
    finished(outcome: CallOutcome) {
      const at = where();
      const timing = { attempts: outcome.attempts, started_at: started, duration_ms: at.timestamp - started };
      if (outcome.ok) {
        emit({ type: 'step:succeeded', ...at, ...timing, status: 'succeeded', attempt: outcome.attempts, output: outcome.value, fallback: outcome.fallback });
      } else {
        emit({ type: 'step:failed', ...at, ...timing, status: 'failed', attempt: Math.max(1, outcome.attempts), error: outcome.error });
      }
    },
  };
}
