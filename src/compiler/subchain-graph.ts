import type { Diagnostic } from '../common/errors.js';
import type { CompiledFile, TargetRef } from './compile-chain.js';
import type { ChainPlan } from './plan.js';

// Chains that run chains: how deep the nesting goes, and whether it comes back. A run starts each
// sub-chain as its own asynchronous task, so depth costs no stack; but a 1,000-deep nesting still
// holds a thousand runs, and one that comes back to itself never ends. So nesting is limited to
// MAX_SUBCHAIN_DEPTH levels below the chain a caller runs: checked here when chains are compiled
// (the folder as a set, and each chain added from code) and again when a run starts a child.
// Every walk here is iterative: a deep nesting must not overflow the compiler's stack either.

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

/**
 * Levels of sub-chains below `start` (0: it runs none), Infinity when a path from it comes back to
 * a chain on that path. `memo` may be shared between calls over the same graph.
 */
export function nestingDepth(start: string, callees: Callees, memo: Map<string, number> = new Map()): number {
  const onPath = new Set<string>();
  const stack: { name: string; next: number; kids: readonly string[] }[] = [];
  const enter = (name: string): void => {
    onPath.add(name);
    stack.push({ name, next: 0, kids: callees(name) ?? [] });
  };
  if (memo.has(start)) return memo.get(start)!;
  enter(start);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.kids.length) {
      const kid = top.kids[top.next++]!;
      if (onPath.has(kid)) memo.set(kid, Infinity);
      else if (!memo.has(kid)) enter(kid);
      continue;
    }
    let depth = memo.get(top.name) === Infinity ? Infinity : 0;
    for (const kid of top.kids) depth = Math.max(depth, 1 + (memo.get(kid) ?? 0));
    memo.set(top.name, depth);
    onPath.delete(top.name);
    stack.pop();
  }
  return memo.get(start)!;
}

function at(file: CompiledFile, t: TargetRef, code: Diagnostic['code'], message: string): Diagnostic {
  return { code, severity: 'error', message, file: file.file, pointer: t.pointer, line: t.line, col: t.col };
}

function runsChain(t: TargetRef, callees: Callees): boolean {
  return (t.kind === 'chain' || t.kind === 'agent_tool') && callees(t.name) !== undefined;
}

/**
 * Whether one compiled chain nests too deep, placed at the step that leads deepest. With
 * `selfCycle`, also whether it comes back to itself (SUBCHAIN_CYCLE): what `addChain` asks of a
 * chain from code, whose name `callees` must already answer with the new chain's own targets.
 */
export function subChainProblems(file: CompiledFile, callees: Callees, memo: Map<string, number> = new Map(), selfCycle = false): Diagnostic[] {
  const name = file.name;
  if (name === undefined) return [];
  const targets = file.targets.filter((t) => runsChain(t, callees));
  if (selfCycle) {
    for (const t of targets) {
      if (t.name === name || reaches(t.name, name, callees)) {
        return [at(file, t, 'SUBCHAIN_CYCLE', `step '${t.step}' runs chain '${t.name}', which leads back to '${name}'; a chain may not run itself`)];
      }
    }
  }
  let deepest: { t: TargetRef; depth: number } | undefined;
  for (const t of targets) {
    const depth = 1 + nestingDepth(t.name, callees, memo);
    if (depth !== Infinity && depth > (deepest?.depth ?? 0)) deepest = { t, depth };
  }
  if (deepest === undefined || deepest.depth <= MAX_SUBCHAIN_DEPTH) return [];
  const { t, depth } = deepest;
  return [at(file, t, 'SUBCHAIN_TOO_DEEP', `step '${t.step}' runs chain '${t.name}', which nests sub-chains ${depth} levels deep below '${name}'; at most ${MAX_SUBCHAIN_DEPTH} are allowed`)];
}

/** Is `goal` reachable from `from`? */
function reaches(from: string, goal: string, callees: Callees): boolean {
  const seen = new Set<string>([from]);
  const todo = [from];
  while (todo.length > 0) {
    for (const next of callees(todo.pop()!) ?? []) {
      if (next === goal) return true;
      if (!seen.has(next)) {
        seen.add(next);
        todo.push(next);
      }
    }
  }
  return false;
}

/** What `addChain` checks of a chain from code, against the chains known now (`lookup`). */
export function addedChainProblems(file: CompiledFile, plan: ChainPlan, lookup: (name: string) => ChainPlan | undefined): Diagnostic[] {
  const has = (n: string): boolean => n === plan.name || lookup(n) !== undefined;
  const callees: Callees = (n) => {
    const p = n === plan.name ? plan : lookup(n);
    return p ? planCallees(p, has) : undefined;
  };
  return subChainProblems(file, callees, new Map(), true);
}
