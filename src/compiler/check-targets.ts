import { closestNames, didYouMean, type Diagnostic } from '../errors.js';
import type { CompiledFile } from './compile-chain.js';

/** What the compiler checks `tool:` and `chain:` names against. */
export interface NameCatalogue {
  has(name: string): boolean;
  names(): Iterable<string>;
}

/**
 * Checks a compiled file's tool and chain names against what is installed. Kept apart from
 * compiling so that a compiled file stays valid (and cached) while plugins come and go.
 */
export function checkTargets(compiled: CompiledFile, tools: NameCatalogue | undefined, chains: NameCatalogue | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const t of compiled.targets) {
    const catalogue = t.kind === 'tool' ? tools : chains;
    if (!catalogue || catalogue.has(t.name)) continue;
    const known = [...catalogue.names()];
    const suggestion = didYouMean(t.name, known);
    // Tools get the closest names even when none is a likely typo: a model or a person picking a
    // tool wants to see what exists. Chains are few and named by their author, so only a typo helps.
    const hint = suggestion
      ? ` (did you mean '${suggestion}'?)`
      : !known.length
        ? `; no ${t.kind}s are installed`
        : t.kind === 'tool'
          ? `; closest: ${closestNames(t.name, known).join(', ')}`
          : '';
    out.push({
      code: t.kind === 'tool' ? 'UNKNOWN_TOOL' : 'UNKNOWN_CHAIN',
      severity: 'error',
      message: `step '${t.step}' uses unknown ${t.kind} '${t.name}'${hint}`,
      file: compiled.file,
      pointer: t.pointer,
      line: t.line,
      col: t.col,
      ...(suggestion ? { suggestion } : {}),
    });
  }
  return out;
}
