import { cycles, keyedGraph, longestPaths, pathText, shortestPath } from '../common/directed-graph.js';
import type { Diagnostic } from '../common/errors.js';
import type { CompiledFile, TargetRef } from './compile-chain.js';
import type { ChainPlan } from './plan.js';

// Chains that run chains: how deep the nesting goes, and whether it comes back. A run starts each
// sub-chain as its own asynchronous task, so depth costs no stack; but a 1,000-deep nesting still
// holds a thousand runs, and one that comes back to itself never ends. So nesting is limited to
// MAX_SUBCHAIN_DEPTH levels below the chain a caller runs: checked here when chains are compiled
// (the folder as a set, and each chain added from code) and again when a run starts a child.
// The walks are common/directed-graph.ts's: a deep nesting must not overflow the compiler's stack either.

export const MAX_SUBCHAIN_DEPTH = 64;

/** The chains a chain may run (its `chain:` steps, and chains an agent step offers its model); undefined for an unknown chain. */
export type Callees = (chain: string) => readonly string[] | undefined;

/** What a compiled plan may run, among the chains `has` knows. */
export function planCallees(plan: ChainPlan, has: (name: string) => boolean): string[] {
  const out = new Set(plan.chains);
  for (const step of plan.steps) {
    if (step.target.kind !== 'agent') continue;
    for (const name of step.target.agent.tools) if (has(name)) out.add(name);
  }
  return [...out];
}

function at(file: CompiledFile, t: TargetRef, code: Diagnostic['code'], message: string): Diagnostic {
  return { code, severity: 'error', message, file: file.file, pointer: t.pointer, line: t.line, col: t.col };
}

/** A `chain:` step, or an agent that offers a chain as a tool (a model could recurse through it without bound), naming a known chain. */
function runsChain(t: TargetRef, callees: Callees): boolean {
  return (t.kind === 'chain' || t.kind === 'agent_tool') && callees(t.name) !== undefined;
}

export interface SubChainProblem {
  readonly chain: string;
  readonly diagnostic: Diagnostic;
}

/**
 * What the sub-chain graph of `files` (and every chain they run, as `callees` answers) says about
 * them: SUBCHAIN_CYCLE for each file on a cycle, at its first step that leads back to it, then
 * SUBCHAIN_TOO_DEEP for each file that nests too deep, at the step that leads deepest.
 */
export function subChainProblems(files: Iterable<CompiledFile>, callees: Callees): SubChainProblem[] {
  const byName = new Map<string, CompiledFile>();
  for (const f of files) if (f.name !== undefined && !byName.has(f.name)) byName.set(f.name, f);
  const graph = keyedGraph(byName.keys(), callees);
  const { keys, index, next } = graph;
  const problems: SubChainProblem[] = [];

  // Chains that run themselves first, in order of the graph, each cycle's files by name.
  const found = cycles(next);
  const ordered = [...found.filter((c) => c.length > 1), ...found.filter((c) => c.length === 1).sort((a, b) => a[0]! - b[0]!)];
  for (const component of ordered) {
    const members = new Set(component);
    for (const name of component.map((i) => keys[i]!).sort()) {
      const f = byName.get(name);
      if (f === undefined) continue;
      const t = f.targets.find((x) => runsChain(x, callees) && members.has(index.get(x.name)!))!;
      const back = t.name === name ? [name] : shortestPath(index.get(t.name)!, index.get(name)!, next, (i) => members.has(i))!.map((i) => keys[i]!);
      const path = pathText([name, ...back]);
      problems.push({ chain: name, diagnostic: at(f, t, 'SUBCHAIN_CYCLE', `step '${t.step}' runs chain '${t.name}', which leads back to '${name}': ${path}; a chain may not run itself`) });
    }
  }

  // Nesting past the limit (a path into a cycle has no depth: the cycle is reported above).
  const below = longestPaths(next);
  for (const [name, f] of byName) {
    let deepest: { t: TargetRef; depth: number } | undefined;
    for (const t of f.targets) {
      if (!runsChain(t, callees)) continue;
      const depth = 1 + below[index.get(t.name)!]!;
      if (depth !== Infinity && depth > (deepest?.depth ?? 0)) deepest = { t, depth };
    }
    if (deepest === undefined || deepest.depth <= MAX_SUBCHAIN_DEPTH) continue;
    const { t, depth } = deepest;
    const message = `step '${t.step}' runs chain '${t.name}', which nests sub-chains ${depth} levels deep below '${name}'; at most ${MAX_SUBCHAIN_DEPTH} are allowed`;
    problems.push({ chain: name, diagnostic: at(f, t, 'SUBCHAIN_TOO_DEEP', message) });
  }
  return problems;
}

/** What `addChain` checks of a chain from code, against the chains known now (`lookup`). */
export function addedChainProblems(file: CompiledFile, plan: ChainPlan, lookup: (name: string) => ChainPlan | undefined): Diagnostic[] {
  const has = (n: string): boolean => n === plan.name || lookup(n) !== undefined;
  const callees: Callees = (n) => {
    const p = n === plan.name ? plan : lookup(n);
    return p ? planCallees(p, has) : undefined;
  };
  return subChainProblems([file], callees).map((p) => p.diagnostic);
}
