import type { Callee } from '../call/index.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { EventListener } from '../run-model/events.js';
import type { ApproveCallback, ToolSet } from '../registry/types.js';

// All the language-model layer may reach: the tools and chains to offer, and how to call
// a chain. An engine satisfies it; an agent step offers a smaller one (only the tools and chains it
// lists, its chains run as children of the step's run). Tools are called through the call unit
// directly: a Tool is a Callee.

/** What the chain runs a call starts inherit from the batch. */
export interface ChainCallOptions {
  readonly approve?: ApproveCallback;
  readonly onEvent?: EventListener;
}

export interface CallTargets {
  tools(): ToolSet;
  chains(): readonly ChainPlan[];
  /** A chain as something to call: its input checked like arguments, each call a run of it. */
  chainCallee(chain: ChainPlan, options?: ChainCallOptions): Callee;
}
