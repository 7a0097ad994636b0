import type { PathRef } from './types.js';

/**
 * The root members (step or input names) a set of refs reads, in first-seen order. `wholeContext`
 * is set when some path has no single root (`$`, `$.*`, `$..x`): such a path can read anything,
 * so a caller building edges must treat it as depending on every earlier step.
 */
export function refsOf(refs: readonly PathRef[]): { roots: string[]; wholeContext: boolean } {
  const roots: string[] = [];
  const seen = new Set<string>();
  let wholeContext = false;
  for (const ref of refs) {
    if (ref.root === undefined) {
      wholeContext = true;
    } else if (!seen.has(ref.root)) {
      seen.add(ref.root);
      roots.push(ref.root);
    }
  }
  return { roots, wholeContext };
}
