import { createHash } from 'node:crypto';
import type { ChainPlan } from '../../compiler/plan.js';

// A dangerous tool's call over MCP, made a run of its own so that it can wait for a person: a
// one-step chain that calls the tool with the call's arguments. A run can only be woken by a
// process that knows its chain, so the chain is made from what the run records — the tool's name
// and the names of its arguments (its input is `{ tool, args }`) — and the same call always makes
// the same chain, with the same name and hash: a later `toolchain mcp` on the same store makes it
// again for every such run still waiting (restoreToolRuns) and wakes them. These chains are the
// server's own: they are not listed to clients.

const PREFIX = 'mcp_call_';

/** What a tool run records as its input. */
export interface ToolRunInput {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/** What making and finding these chains needs of an engine. */
export interface ToolRunTargets {
  chain(name: string): ChainPlan | undefined;
  addChain(text: string, file?: string): ChainPlan;
}

export function isToolRun(chain: string): boolean {
  return chain.startsWith(PREFIX);
}

/** The chain (made now if this process has not yet) whose run is one call of `tool` with arguments named `keys`. */
export function toolRunChain(targets: ToolRunTargets, tool: string, keys: readonly string[]): string {
  const names = [...keys].sort();
  const hash = createHash('sha256').update(JSON.stringify([tool, names])).digest('hex').slice(0, 12);
  // Chain names are letters, digits and underscores: the tool's name is kept readable, the hash makes it unique.
  const name = `${PREFIX}${tool.replace(/[^A-Za-z0-9_]/g, '_')}_${hash}`;
  if (targets.chain(name) !== undefined) return name;
  const input_map = Object.fromEntries(names.map((k) => [k, /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `$.args.${k}` : `$.args['${k.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`]));
  // JSON is YAML: no quoting rule of YAML's can change what the chain says.
  const text = JSON.stringify({
    name,
    description: `A call of dangerous tool '${tool}' made over MCP, as a run that can wait for its approval.`,
    inputs: { tool: 'string', args: 'object' },
    steps: [{ name: 'call', tool, input_map }],
  });
  targets.addChain(text, `<mcp call of ${tool}>`);
  return name;
}

/** The chain of a run recorded as a tool run, made again (for a run parked by an earlier process). */
export function restoreToolRun(targets: ToolRunTargets, input: unknown): void {
  if (typeof input !== 'object' || input === null) return;
  const { tool, args } = input as Partial<ToolRunInput>;
  if (typeof tool !== 'string' || typeof args !== 'object' || args === null) return;
  toolRunChain(targets, tool, Object.keys(args));
}
