import { hasErrors, type Diagnostic } from '../common/errors.js';
import { readTextFile } from '../loader/index.js';
import { chainSignatures, toolSignatures, withFlowCheck } from './check-flows.js';
import { checkTargets, type NameCatalogue } from './check-targets.js';
import { compileText } from './compile-chain.js';
import type { CompileCache } from './compile-cache.js';
import type { ChainPlan } from './plan.js';
import { addedChainProblems } from './subchain-graph.js';

export type { NameCatalogue } from './check-targets.js';
export { compileChainSet, loadChainSet, readChainFiles, readChainSources, type ChainSet, type ChainSource } from './chain-set.js';
export { createCompileCache, type CompileCache, type CompileCacheOptions, type KnownText } from './compile-cache.js';
export type { CompiledFile, TargetRef } from './compile-chain.js';
export { inferOutputs, type ChainFlow, type ChainSignature, type Signatures, type ToolSignature } from './flow/index.js';
export { chainSignatures } from './check-flows.js';
export { addedChainProblems, MAX_SUBCHAIN_DEPTH, planCallees, subChainProblems, type Callees, type SubChainProblem } from './subchain-graph.js';
export type * from './plan.js';
export type { ToolchainChain as ChainFile } from './chain-file.generated.js';

export interface CompileOptions {
  /** Shown in diagnostics; also part of the cache key. Default `<memory>`. */
  readonly file?: string;
  /** Memoises compiles (see createCompileCache); without one the text is compiled afresh. */
  readonly cache?: CompileCache;
  /** When given, `tool:` names are checked against it. */
  readonly tools?: NameCatalogue;
  /** When given, `chain:` names are checked against it. */
  readonly chains?: NameCatalogue;
  /**
   * The chains known now, by name: with `chains`, the chain may then not run itself through them
   * (SUBCHAIN_CYCLE) nor nest sub-chains too deep (SUBCHAIN_TOO_DEEP) — what `addChain` checks.
   */
  readonly plans?: (name: string) => ChainPlan | undefined;
  /** The text's hashText, when the caller has it (computed once as the file was read): a cache hit is then O(1). */
  readonly hash?: string;
  /** The largest text accepted, in bytes (default 1 MiB: DEFAULT_LOAD_LIMITS.maxBytes). */
  readonly maxBytes?: number;
}

export interface CompileResult {
  /** Present when there is no error. */
  readonly plan?: ChainPlan;
  readonly diagnostics: readonly Diagnostic[];
}

/** Parses and compiles a chain from its YAML text. With `cache`, compiling the same text again is a look-up. */
export function compileChain(text: string, options: CompileOptions = {}): CompileResult {
  const file = options.file ?? '<memory>';
  const known = { hash: options.hash, maxBytes: options.maxBytes };
  const compiled = options.cache ? options.cache.compile(text, file, known) : compileText(text, file, options.hash, undefined, options.maxBytes);
  if (!options.tools && !options.chains) return compiled.plan ? { plan: compiled.plan, diagnostics: compiled.diagnostics } : { diagnostics: compiled.diagnostics };
  const linked = checkTargets(compiled, options.tools, options.chains);
  if (compiled.plan && options.plans && !linked.length) linked.push(...addedChainProblems(compiled, compiled.plan, options.plans));
  // A catalogue that knows its tools' schemas (a ToolSet, say) gets the data flow checked.
  const tool = toolSignatures(options.tools);
  const flow = tool ? withFlowCheck(compiled, chainSignatures(new Map(), tool)) : { diagnostics: [...compiled.diagnostics], problems: [] };
  const diagnostics = linked.length || flow.problems.length ? [...flow.diagnostics, ...linked] : compiled.diagnostics;
  return compiled.plan && !linked.length && !hasErrors(flow.problems) ? { plan: compiled.plan, diagnostics } : { diagnostics };
}

/** Reads a chain file and compiles it. */
export async function loadChain(path: string, options: Omit<CompileOptions, 'file'> = {}): Promise<CompileResult> {
  const read = await readTextFile(path);
  if (!('text' in read)) return { diagnostics: read.diagnostics };
  return compileChain(read.text, { ...options, file: path });
}
export { chainNotFound, unreadChains, type UnreadChains } from './unread-chains.js';
