import type { CallContext, CallOutcome, RunWaits } from '../call/index.js';
import { sleep } from '../common/clock.js';
import type { PlanStep } from '../compiler/plan.js';
import type { AgentHost, AgentTarget, ToolCallProgress } from './agent-step.js';
import type { RunEvent } from './events.js';
import type { Run } from './run.js';
import { chainCallee } from './step-callees.js';

// What a run lends one attempt of an `agent` step (agent-step.ts). Names the model may call
// resolve in the run's own tool set (the versions the run started with), then in the engine's
// chains; chains run as children of this run, so their events carry this step as parent. Each
// tool call the model makes is reported as step events of `STEP›NAME` carrying the call's id and
// turn; its log lines are this step's, tagged with the call id. Nothing is reported once the
// attempt was aborted (its events would land after its step's end).

export function agentHost(run: Run, step: PlanStep, ctx: CallContext): AgentHost {
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
