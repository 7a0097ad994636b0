import { chainSignatures } from '../../compiler/check-flows.js';
import type { ChainPlan } from '../../compiler/plan.js';
import type { JsonSchema } from '../../common/json.js';
import type { Tool, ToolSet } from '../../registry/types.js';
import type { CallTargets } from '../call-targets.js';

// What a model can call: every tool, and every chain — a chain is a tool whose parameters are its
// inputs and whose description is the chain's. Exporters and the executor of calls both
// start from this list, so what a model is offered and what its calls reach cannot drift apart.

/** What exporters read tools and chains from: an engine (any CallTargets), or the parts of one. */
export type CallableSource =
  | Pick<CallTargets, 'tools' | 'chains'>
  | { readonly tools: ToolSet | readonly Tool[]; readonly chains?: readonly ChainPlan[] };

export type CallableTarget =
  | { readonly kind: 'tool'; readonly tool: Tool }
  | { readonly kind: 'chain'; readonly chain: ChainPlan };

export interface Callable {
  readonly kind: 'tool' | 'chain';
  /** The tool's qualified name (`plugin/name`, or the bare name for tools from code), or the chain's name. */
  readonly target: string;
  /** The name as the chain or manifest wrote it: a tool's bare name, a chain's name. */
  readonly baseName: string;
  /** The plugin that provides the tool; undefined for tools from code and for chains. */
  readonly plugin: string | undefined;
  readonly description: string;
  /** A JSON Schema of `type: object` (a chain's inputs schema). */
  readonly parameters: JsonSchema;
  /** What a call returns, when known: a tool's `returns`, a chain's outputs as inferred from its data flow. */
  readonly returns: JsonSchema | undefined;
  /** A tool's result may come back cut and marked (`truncate: true`). */
  readonly truncates: boolean;
  readonly dangerous: boolean;
  readonly ref: CallableTarget;
}

function isEngine(source: CallableSource): source is Pick<CallTargets, 'tools' | 'chains'> {
  return typeof source.tools === 'function' && typeof (source as { chains?: unknown }).chains === 'function';
}

function toolList(tools: ToolSet | readonly Tool[]): readonly Tool[] {
  return Array.isArray(tools) ? tools : (tools as ToolSet).tools();
}

export function toolCallable(tool: Tool): Callable {
  return {
    kind: 'tool',
    target: tool.qualifiedName,
    baseName: tool.name,
    plugin: tool.plugin,
    description: tool.description !== '' ? tool.description : `Calls the tool '${tool.qualifiedName}'.`,
    parameters: tool.parameters,
    returns: tool.returns,
    truncates: tool.truncates,
    dangerous: tool.dangerous,
    ref: { kind: 'tool', tool },
  };
}

export function chainCallable(chain: ChainPlan, returns?: JsonSchema): Callable {
  return {
    kind: 'chain',
    target: chain.name,
    baseName: chain.name,
    plugin: undefined,
    description: chain.description !== undefined && chain.description !== '' ? chain.description : `Runs the chain '${chain.name}'.`,
    parameters: chain.inputs.schema,
    returns,
    truncates: false,
    dangerous: false,
    ref: { kind: 'chain', chain },
  };
}

/** Tools first (in the registry's order), then chains. */
export function listCallables(source: CallableSource): Callable[] {
  const tools = isEngine(source) ? source.tools().tools() : toolList(source.tools);
  const chains = isEngine(source) ? source.chains() : (source.chains ?? []);
  const outputs = chainOutputs(chains, tools);
  return [...tools.map(toolCallable), ...chains.map((c) => chainCallable(c, outputs(c.name)))];
}

/** Each chain's outputs schema, inferred from its flow against these tools' `returns` (and the other chains'). */
function chainOutputs(chains: readonly ChainPlan[], tools: readonly Tool[]): (name: string) => JsonSchema | undefined {
  const byName = new Map<string, Tool>();
  for (const t of tools) {
    byName.set(t.qualifiedName, t);
    if (!byName.has(t.name)) byName.set(t.name, t);
  }
  const signatures = chainSignatures(new Map(chains.map((c) => [c.name, c])), (name) => byName.get(name));
  return (name) => signatures.chain(name)?.outputs;
}
