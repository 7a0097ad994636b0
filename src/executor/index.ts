// The executor: plan + input → result.
import type { ChainPlan } from '../compiler/plan.js';
import type { ToolSet } from '../registry/types.js';
import { runChain } from './run-chain.js';
import type { ExecutionOptions, ExecutorHost } from './types.js';
import type { RunResult } from '../run-model/result.js';

/** Runs `plan` once (its failure handling included). Never rejects for anything a user or a tool did: failures are in the result. */
export function executeChain(host: ExecutorHost, plan: ChainPlan, tools: ToolSet, input: unknown, options: ExecutionOptions = {}): Promise<RunResult> {
  return runChain(host, plan, options, undefined, tools, input);
}

export { systemClock, sleep, type Clock, type TimerHandle } from '../common/clock.js';
export { createSlots, type Slots } from './slots.js';
export { createInputChecker, type CheckInput, type InputResult } from './run-inputs.js';
export { createBinder, type Binder, type BoundPlan } from './call-sites.js';
export { chainCallee } from './step-callees.js';
export { endStatusOf } from './run-result.js';
export { STEPS_ENDED } from './run-chain.js';
export { transition, effectsOf, PENDING, type StepState, type StepInput } from './step-state.js';
export type { AgentHost, AgentMessages, AgentRequest, AgentRunner, AgentTarget, ToolCallProgress } from './agent-step.js';
export type { ExecutionOptions, ExecutorHost, RunOptions, StepMocks } from './types.js';
