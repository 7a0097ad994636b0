import { closestNames, didYouMean, type Diagnostic } from '../common/errors.js';
import type { CompiledFile, TargetRef } from './compile-chain.js';
import type { ToolSignature } from './flow/index.js';

/** What the compiler checks `tool:` and `chain:` names against. */
export interface NameCatalogue {
  has(name: string): boolean;
  names(): Iterable<string>;
  /** A tool's schemas, for the data-flow check; a ToolSet's `get` serves too. */
  signature?(name: string): ToolSignature | undefined;
  get?(name: string): ToolSignature | undefined;
  /** Why a name that is declared somewhere is not usable (a tool that failed to load), for the message. */
  why?(name: string): string | undefined;
}

/**
 * Checks a compiled file's tool and chain names against what is installed. Kept apart from
 * compiling so that a compiled file stays valid (and cached) while plugins come and go.
 */
export function checkTargets(compiled: CompiledFile, tools: NameCatalogue | undefined, chains: NameCatalogue | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const t of compiled.targets) {
    const problem = t.kind === 'agent_tool' ? unknownAgentTool(t, tools, chains) : unknownTarget(t, t.kind === 'tool' ? tools : chains);
    if (!problem) continue;
    const { message, suggestion } = problem;
    out.push({
      code: t.kind === 'chain' ? 'UNKNOWN_CHAIN' : 'UNKNOWN_TOOL',
      severity: 'error',
      message,
      file: compiled.file,
      pointer: t.pointer,
      line: t.line,
      col: t.col,
      ...(suggestion ? { suggestion } : {}),
    });
  }
  return out;
}

interface Problem {
  readonly message: string;
  readonly suggestion: string | undefined;
}

function unknownTarget(t: TargetRef, catalogue: NameCatalogue | undefined): Problem | undefined {
  if (!catalogue || catalogue.has(t.name)) return undefined;
  const why = catalogue.why?.(t.name);
  if (why !== undefined) return { message: `step '${t.step}' uses ${t.kind} '${t.name}', ${why}`, suggestion: undefined };
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
  return { message: `step '${t.step}' uses unknown ${t.kind} '${t.name}'${hint}`, suggestion };
}

/**
 * An agent may call tools and chains alike, so its name is unknown only when neither catalogue
 * has it; without both catalogues it cannot be told apart from a name the missing one holds.
 */
function unknownAgentTool(t: TargetRef, tools: NameCatalogue | undefined, chains: NameCatalogue | undefined): Problem | undefined {
  if (!tools || !chains || tools.has(t.name) || chains.has(t.name)) return undefined;
  const known = [...tools.names(), ...chains.names()];
  const suggestion = didYouMean(t.name, known);
  const hint = suggestion
    ? ` (did you mean '${suggestion}'?)`
    : known.length
      ? `; closest: ${closestNames(t.name, known).join(', ')}`
      : '; no tools or chains are installed';
  return { message: `agent step '${t.step}' offers '${t.name}', which is neither an installed tool nor a chain${hint}`, suggestion };
}
