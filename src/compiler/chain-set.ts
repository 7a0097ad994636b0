import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostic } from '../common/errors.js';
import { readTextFile } from '../loader/index.js';
import { chainSignatures, toolSignatures, withFlowCheck } from './check-flows.js';
import { checkTargets, type NameCatalogue } from './check-targets.js';
import type { CompileCache } from './compile-cache.js';
import { compileText, hashText, type CompiledFile } from './compile-chain.js';
import type { ChainPlan } from './plan.js';
import { subChainProblems, type Callees } from './subchain-graph.js';

/** Every chain of a folder, compiled and checked against each other and the installed tools. */
export interface ChainSet {
  /** The runnable chains by name: those whose file, tools and sub-chains have no error. */
  readonly plans: ReadonlyMap<string, ChainPlan>;
  readonly files: readonly CompiledFile[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface ChainSource {
  readonly file: string;
  readonly text: string;
  /** hashText(text), computed once as the file is read: the compile cache's key. */
  readonly hash?: string;
}

const CHAIN_FILE = /\.ya?ml$/;
/** Chain tests live beside the chains and are not chains. */
const TEST_FILE = /\.test\.ya?ml$/;

/** Reads every `.yaml`/`.yml` file directly in `dir`. A missing folder is an empty set. */
export async function readChainSources(dir: string): Promise<{ sources: ChainSource[]; diagnostics: Diagnostic[] }> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => CHAIN_FILE.test(n) && !TEST_FILE.test(n)).sort();
  } catch {
    return { sources: [], diagnostics: [] };
  }
  return readChainFiles(names.map((n) => join(dir, n)));
}

/** Reads chain files, holding each to the loader's size limit before it is read. */
export async function readChainFiles(files: readonly string[]): Promise<{ sources: ChainSource[]; diagnostics: Diagnostic[] }> {
  const sources: ChainSource[] = [];
  const diagnostics: Diagnostic[] = [];
  // Read side by side, kept in the order given.
  for (const [k, read] of (await Promise.all(files.map((f) => readTextFile(f)))).entries()) {
    if ('text' in read) sources.push({ file: files[k]!, text: read.text, hash: hashText(read.text) });
    else diagnostics.push(...read.diagnostics);
  }
  return { sources, diagnostics };
}

/** `cache`: the caller's compile cache (an unchanged file is then a look-up); without one every file compiles afresh. */
export function compileChainSet(sources: readonly ChainSource[], tools?: NameCatalogue, cache?: CompileCache): ChainSet {
  const compiled = sources.map((s) => compileGuarded(s.text, s.file, cache, s.hash));
  const byName = new Map<string, CompiledFile>();
  for (const f of compiled) if (f.name && !byName.has(f.name)) byName.set(f.name, f);
  // With a catalogue that knows its tools' schemas (validate), the data flow is checked too.
  const tool = toolSignatures(tools);
  const signatures = tool ? chainSignatures(byName, tool) : undefined;
  const flowBroken = new Set<string>();
  const files = compiled.map((f) => {
    if (!signatures) return f;
    const { diagnostics, problems } = withFlowCheck(f, signatures);
    if (problems.some((d) => d.severity === 'error') && f.name) flowBroken.add(f.file);
    return { ...f, diagnostics };
  });
  const diagnostics: Diagnostic[] = files.flatMap((f) => f.diagnostics);
  byName.clear();
  for (const f of files) {
    if (!f.name) continue;
    const first = byName.get(f.name);
    if (first) {
      diagnostics.push({
        code: 'DUPLICATE_CHAIN',
        severity: 'error',
        message: `chain name '${f.name}' is already used by ${first.file}`,
        file: f.file,
        pointer: '/name',
        line: f.namePosition?.line ?? 1,
        col: f.namePosition?.col ?? 1,
      });
    } else byName.set(f.name, f);
  }
  const chains: NameCatalogue = { has: (n) => byName.has(n), names: () => byName.keys() };
  const broken = new Set<string>();
  for (const f of byName.values()) {
    const problems = checkTargets(f, tools, chains);
    diagnostics.push(...problems);
    if (problems.length || !f.plan || flowBroken.has(f.file)) broken.add(f.name!);
  }
  // Sub-chain cycles and nesting past the limit. A target that runs another chain: a `chain:`
  // step, or an agent that offers a chain as a tool.
  const callees: Callees = (n) => byName.get(n)?.targets.filter((t) => (t.kind === 'chain' || t.kind === 'agent_tool') && byName.has(t.name)).map((t) => t.name);
  for (const { chain, diagnostic } of subChainProblems(byName.values(), callees)) {
    diagnostics.push(diagnostic);
    broken.add(chain);
  }
  // A webhook path is one trigger's: a chain declaring a path a chain before it (by file name) has is not loaded.
  const paths = new Map<string, string>();
  for (const f of byName.values()) {
    if (broken.has(f.name!)) continue;
    for (const t of f.plan?.triggers ?? []) {
      if (t.webhook === undefined) continue;
      const first = paths.get(t.webhook.path);
      if (first === undefined) {
        paths.set(t.webhook.path, f.file);
        continue;
      }
      diagnostics.push({
        code: 'BAD_TRIGGER',
        severity: 'error',
        message: `webhook path '${t.webhook.path}' is declared by ${first} too: a path is served by one trigger, so this chain is not loaded; give it another path`,
        file: f.file,
        pointer: `${t.pointer}/webhook/path`,
        line: t.webhook.pathLine,
        col: t.webhook.pathCol,
      });
      broken.add(f.name!);
    }
  }
  // A chain that runs a broken chain cannot run either.
  let grew = true;
  while (grew) {
    grew = false;
    for (const f of byName.values()) {
      if (broken.has(f.name!)) continue;
      if (f.plan?.chains.some((c) => broken.has(c))) {
        broken.add(f.name!);
        grew = true;
      }
    }
  }
  const plans = new Map<string, ChainPlan>();
  for (const [name, f] of byName) if (f.plan && !broken.has(name)) plans.set(name, f.plan);
  return { plans, files, diagnostics };
}

/**
 * One file's compile, held to that file: should the compiler ever throw on some input (a bug,
 * never the user's fault), the file gets a diagnostic and the rest of the folder still loads.
 */
function compileGuarded(text: string, file: string, cache: CompileCache | undefined, hash: string | undefined): CompiledFile {
  try {
    return cache ? cache.compile(text, file, { hash }) : compileText(text, file, hash);
  } catch (error) {
    const message = `the compiler failed on this file (${error instanceof Error ? error.message : String(error)}); please report it with the file`;
    return { file, hash: '', diagnostics: [{ code: 'SCHEMA_INVALID', severity: 'error', message, file, line: 1, col: 1 }], targets: [] };
  }
}

export async function loadChainSet(dir: string, tools?: NameCatalogue, cache?: CompileCache): Promise<ChainSet> {
  const { sources, diagnostics } = await readChainSources(dir);
  const set = compileChainSet(sources, tools, cache);
  return diagnostics.length ? { ...set, diagnostics: [...diagnostics, ...set.diagnostics] } : set;
}
