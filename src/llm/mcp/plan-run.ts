import type { ApproveCallback } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';
import { exportNames } from '../export/export-names.js';
import { dropNullOptionals } from '../export/null-optionals.js';
import { toArguments } from '../parse/call-shape.js';
import type { McpRunTargets } from './call-as-run.js';
import { isToolRun, toolRunChain } from './tool-runs.js';

// Which MCP calls become durable runs, decided before anything runs: a dangerous tool's call
// whose `approve` answers 'wait' (asked here, with the validated arguments — `true` or `false`
// decides the call at once, and the call unit is not asked again), and a chain that may wait or
// call a dangerous tool (it may have done half its work by the time it asks, so the whole run must
// be able to wait). Anything else, and any call whose name or arguments are wrong, takes the
// ordinary path (executeToolCalls), which words those errors.

export type RunPlan =
  | { readonly kind: 'direct' }
  | { readonly kind: 'decided'; readonly approved: boolean }
  | { readonly kind: 'run'; readonly chain: string; readonly input: Record<string, unknown> };

/** What the server offers: the engine without the one-step chains it made for calls (tool-runs.ts). */
export function servedTargets(engine: CallTargets): CallTargets {
  return {
    tools: () => engine.tools(),
    chains: () => engine.chains().filter((c) => !isToolRun(c.name)),
    chainCallee: (chain, options) => engine.chainCallee(chain, options),
  };
}

export async function planRun(
  runs: McpRunTargets,
  served: CallTargets,
  name: string,
  rawArgs: unknown,
  call: { readonly id: string; readonly runId: string; readonly approve: ApproveCallback | undefined },
): Promise<RunPlan> {
  const tools = served.tools();
  const callable = exportNames({ tools, chains: served.chains() }).resolve(name);
  if (callable === undefined) return { kind: 'direct' };
  const ref = callable.ref;
  if (ref.kind === 'tool' && !ref.tool.dangerous) return { kind: 'direct' };
  if (ref.kind === 'chain' && !(ref.chain.mayWait || ref.chain.steps.some((s) => s.target.kind === 'agent') || ref.chain.tools.some((t) => tools.get(t)?.dangerous === true))) {
    return { kind: 'direct' };
  }
  const parsed = toArguments(rawArgs ?? {});
  if (!parsed.ok) return { kind: 'direct' };
  let prepared;
  try {
    const callee = ref.kind === 'chain' ? served.chainCallee(ref.chain) : ref.tool;
    prepared = callee.prepare(dropNullOptionals(parsed.value, callable.parameters));
  } catch {
    return { kind: 'direct' };
  }
  if (!prepared.ok) return { kind: 'direct' };
  if (ref.kind === 'chain') return { kind: 'run', chain: ref.chain.name, input: prepared.args };
  if (call.approve === undefined) return { kind: 'direct' };
  let answer: unknown;
  try {
    answer = await call.approve({ tool: ref.tool.qualifiedName, args: prepared.args, step: call.id, run_id: call.runId });
  } catch {
    answer = false;
  }
  if (answer !== 'wait') return { kind: 'decided', approved: answer === true };
  const chain = toolRunChain(runs, ref.tool.qualifiedName, Object.keys(prepared.args));
  return { kind: 'run', chain, input: { tool: ref.tool.qualifiedName, args: prepared.args } };
}
