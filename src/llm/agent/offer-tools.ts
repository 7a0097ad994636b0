import type { ChainPlan } from '../../compiler/plan.js';
import { closestNames, ToolchainError } from '../../common/errors.js';
import type { Tool, ToolSet } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import { toOpenAITools } from '../export/to-openai.js';
import type { AgentHost } from './types.js';
import type { FunctionDefinition } from './wire.js';

// The agent's `tools`, resolved when an attempt starts (the run's tool versions, the current
// chains), as CallTargets that hold only them. The same view feeds the exporter (the function
// definitions) and executeToolCalls (the calls), so a model is offered exactly what its calls can
// reach — under the names the exporters give everywhere (`geo/find_city` is offered as
// `find_city`, or `geo__find_city` when the bare name is ambiguous) — and nothing else: a call to
// a tool the step does not offer is an unknown name. Its chains run as children of the step's run.

export interface OfferedTools {
  readonly targets: CallTargets;
  readonly definitions: readonly FunctionDefinition[];
}

export function offerTools(names: readonly string[], host: AgentHost): OfferedTools {
  const tools: Tool[] = [];
  const chains: ChainPlan[] = [];
  for (const name of names) {
    const target = host.resolve(name);
    if (!target) throw notFound(name, host);
    if (target.kind === 'tool') tools.push(target.tool);
    else chains.push(target.plan);
  }
  const toolSet = onlyThese(tools);
  const targets: CallTargets = { tools: () => toolSet, chains: () => chains, chainCallee: (plan) => host.chainCallee(plan) };
  return { targets, definitions: toOpenAITools(targets) };
}

/** A ToolSet holding only `tools`, for the exporter and executeToolCalls to see. */
function onlyThese(tools: readonly Tool[]): ToolSet {
  const byName = new Map<string, Tool>();
  for (const t of tools) {
    byName.set(t.qualifiedName, t);
    if (!byName.has(t.name)) byName.set(t.name, t);
  }
  return {
    version: 0,
    warnings: [],
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    names: () => tools.map((t) => t.qualifiedName),
    tools: () => tools,
    formerProvider: () => undefined,
  };
}

function notFound(name: string, host: AgentHost): ToolchainError {
  const closest = closestNames(name, [...host.knownNames()], 3);
  const hint = closest.length ? `; closest: ${closest.join(', ')}` : '; no tools or chains are installed';
  return new ToolchainError('TOOL_NOT_FOUND', `step '${host.step}' offers '${name}' to its model, but it is neither a tool nor a chain${hint}`);
}
