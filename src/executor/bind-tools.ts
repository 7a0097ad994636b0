import type { ChainPlan } from '../compiler/plan.js';
import { ToolchainError } from '../common/errors.js';
import { toolNotFound } from '../registry/tool-not-found.js';
import type { Tool, ToolSet } from '../registry/types.js';

// Chains are compiled without the tool catalogue (tools come and go while the engine runs), so
// names are resolved here, when a run starts: once per (plan, ToolSet) pair, then reused by every
// run until the registry changes. A run keeps the ToolSet it started with (SPEC §3.3).

export interface BoundPlan {
  readonly tools: ToolSet;
  /** The tool of each step, by step index; undefined for `chain:` steps. */
  readonly stepTools: readonly (Tool | undefined)[];
  /** The fallback tool of each step that names one. */
  readonly fallbackTools: readonly (Tool | undefined)[];
}

// One entry per plan: the ToolSet changes rarely, and keeping only the latest binding means an
// old ToolSet is not held alive by a cache.
const bindings = new WeakMap<ChainPlan, BoundPlan>();

/** The plan's tools resolved in `tools`; a ToolchainError (TOOL_NOT_FOUND) naming the step when one is missing. */
export function bindTools(plan: ChainPlan, tools: ToolSet): BoundPlan | ToolchainError {
  const cached = bindings.get(plan);
  if (cached?.tools === tools) return cached;
  const stepTools: (Tool | undefined)[] = [];
  const fallbackTools: (Tool | undefined)[] = [];
  for (const step of plan.steps) {
    let tool: Tool | undefined;
    if (step.kind === 'tool') {
      tool = tools.get(step.target);
      if (!tool) return inStep(toolNotFound(tools, step.target), step.name);
    }
    stepTools.push(tool);
    let fallback: Tool | undefined;
    if (step.fallback?.tool !== undefined) {
      fallback = tools.get(step.fallback.tool);
      if (!fallback) return inStep(toolNotFound(tools, step.fallback.tool), step.name);
    }
    fallbackTools.push(fallback);
  }
  const bound: BoundPlan = { tools, stepTools, fallbackTools };
  bindings.set(plan, bound);
  return bound;
}

function inStep(error: ToolchainError, step: string): ToolchainError {
  return new ToolchainError(error.code, `step '${step}': ${error.message}`, error.diagnostics);
}
