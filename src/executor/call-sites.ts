import type { Callee, CallSite, FallbackCall, InvalidWording } from '../call/index.js';
import { ToolchainError } from '../common/errors.js';
import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { toolNotFound } from '../registry/tool-not-found.js';
import type { Tool, ToolSet } from '../registry/types.js';
import { PENDING, type StepState } from './step-state.js';
import { validationMessage } from './validation-message.js';

// Chains are compiled without the tool catalogue (tools come and go while the engine runs), so a
// plan's tool names are resolved when a run starts: into one CallSite per tool step — the callee,
// its policies, its fallback and how its bad arguments are worded — once per (plan, ToolSet)
// pair, then shared by every run until the registry changes. A run keeps the ToolSet it started
// with. Sub-chain and agent steps get their sites from the run itself: what they call
// is a child of that run.

export interface BoundPlan {
  readonly tools: ToolSet;
  /** By step index: the site of a tool step; undefined for `chain:` and `agent:` steps. */
  readonly sites: readonly (CallSite | undefined)[];
  /** By step index: the tool a `fallback: { tool }` names. */
  readonly fallbackTools: readonly (Tool | undefined)[];
}

/** What every run of a plan starts from, copied with `slice()` (plain arrays: copying a frozen one is slow). */
export interface RunArrays {
  readonly states: readonly StepState[];
  readonly waitCounts: readonly number[];
}

/** The engine's cache of what runs share: bindings (one per plan, for the latest ToolSet) and starting arrays. */
export interface Binder {
  bind(plan: ChainPlan, tools: ToolSet): BoundPlan | ToolchainError;
  arrays(plan: ChainPlan): RunArrays;
}

export function createBinder(): Binder {
  // Keeping only the latest binding per plan means an old ToolSet is not held alive by the cache.
  const bindings = new WeakMap<ChainPlan, BoundPlan>();
  const arrays = new WeakMap<ChainPlan, RunArrays>();
  return {
    arrays(plan) {
      let a = arrays.get(plan);
      if (a === undefined) {
        a = { states: plan.steps.map(() => PENDING), waitCounts: [...plan.waitCounts] };
        arrays.set(plan, a);
      }
      return a;
    },
    bind(plan, tools) {
      const cached = bindings.get(plan);
      if (cached?.tools === tools) return cached;
      const bound = bindPlan(plan, tools);
      if (!(bound instanceof ToolchainError)) bindings.set(plan, bound);
      return bound;
    },
  };
}

function bindPlan(plan: ChainPlan, tools: ToolSet): BoundPlan | ToolchainError {
  const sites: (CallSite | undefined)[] = [];
  const fallbackTools: (Tool | undefined)[] = [];
  for (const step of plan.steps) {
    const fallbackTool = step.fallback?.kind === 'tool' ? resolveTool(tools, step.fallback.tool, step) : undefined;
    if (fallbackTool instanceof ToolchainError) return fallbackTool;
    fallbackTools.push(fallbackTool);
    if (step.target.kind !== 'tool') {
      sites.push(undefined);
      continue;
    }
    const tool = resolveTool(tools, step.target.tool, step);
    if (tool instanceof ToolchainError) return tool;
    sites.push(stepSite(step, tool, fallbackTool));
  }
  return { tools, sites, fallbackTools };
}

function resolveTool(tools: ToolSet, name: string, step: PlanStep): Tool | ToolchainError {
  const tool = tools.get(name);
  if (tool) return tool;
  const error = toolNotFound(tools, name);
  return new ToolchainError(error.code, `step '${step.name}': ${error.message}`, error.diagnostics);
}

/** The site of any step, given what it calls (and, for a tool fallback, the other tool). */
export function stepSite(step: PlanStep, callee: Callee, fallbackTool: Callee | undefined): CallSite {
  const invalid = wording(step.name, step.input.sources);
  const fb = step.fallback;
  let fallback: FallbackCall | undefined;
  if (fb !== undefined && fb.kind !== 'output') {
    const overrides = fb.input;
    fallback = {
      kind: fb.kind,
      callee: fb.kind === 'tool' ? fallbackTool! : callee,
      args: (primary, scope) => (overrides === undefined ? primary : { ...primary, ...(overrides.get(scope as Record<string, unknown>) as Record<string, unknown>) }),
      invalid: overrides === undefined ? invalid : wording(step.name, { ...step.input.sources, ...overrides.sources }),
    };
  }
  return {
    label: step.name,
    callee,
    retry: step.retry,
    timeoutMs: step.timeoutMs,
    invalid,
    fallback,
    fallbackOutput: fb?.output,
  };
}

function wording(step: string, sources: Readonly<Record<string, string>>): InvalidWording {
  return (callee, args, problems) => validationMessage(step, callee, args, problems, sources);
}

/** Binds the handlers' plans, or the first tool one of them lacks (the run then ends before it starts). */
export function handlerBinding(binder: Binder, plan: ChainPlan, tools: ToolSet): ToolchainError | undefined {
  const h = plan.handlers!;
  for (const p of [h.onFailure, ...h.compensations, h.finally]) {
    if (p === undefined) continue;
    const bound = binder.bind(p, tools);
    if (bound instanceof ToolchainError) return bound;
  }
  return undefined;
}
