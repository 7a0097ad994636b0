import { createHash } from 'node:crypto';
import { didYouMean, hasErrors, suggestionSuffix, type Diagnostic } from '../common/errors.js';
import { compileValue } from '../expr/index.js';
import { parseDuration } from '../expr/duration.js';
import { FORBIDDEN_KEYS } from '../common/forbidden-keys.js';
import type { CompiledValue, PathRef } from '../expr/types.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { capDiagnostics, DEFAULT_LOAD_LIMITS, parseYaml } from '../loader/index.js';
import type { LoadedYaml } from '../loader/types.js';
import { buildGraph, orderEdges, type Edge, type Graph, type StepNode } from './build-graph.js';
import type { ToolchainChain } from './chain-file.generated.js';
import { isWellFormedAgent } from './compile-agent.js';
import { chainHash } from './chain-hash.js';
import { compileTriggers } from './compile-triggers.js';
import { compileStep, type CompiledStepBody, type RawStep } from './compile-step.js';
import { deepFreeze } from './deep-freeze.js';
import { DiagnosticSink } from '../loader/diagnostic-sink.js';
import { normaliseInputs } from './normalise-inputs.js';
import type { ChainPlan, HandlerPlans, PlanStep } from './plan.js';
import { ADDED_NAMES, checkHandlerStep, compensationStep, ERROR_NAME, handlerPlan, STATUS_NAME, THIS_INPUT_NAME, THIS_NAME } from './compile-handlers.js';
import { checkChainSchema } from './schema-check.js';
import { isRecord } from '../common/json.js';
import { schemaPatternProblems } from '../common/linear-regexp.js';
import { dropIllTyped } from './drop-ill-typed.js';
import { extractFlow, type ChainFlow } from './flow/index.js';

/**
 * A `tool:` or `chain:` name a chain uses, and where, for checks against what is installed.
 * `agent_tool`: a name in an agent's `tools`, which may be a tool or a chain.
 */
export interface TargetRef {
  readonly kind: 'tool' | 'chain' | 'agent_tool';
  readonly name: string;
  readonly step: string;
  readonly pointer: string;
  readonly line: number;
  readonly col: number;
}

/** What compiling one file yields before it is checked against the installed tools and chains. */
export interface CompiledFile {
  readonly file: string;
  readonly hash: string;
  /** Present when the file itself has no error. */
  readonly plan?: ChainPlan;
  /** The chain's name, when the file declares a usable one (even if it has errors), and where. */
  readonly name?: string;
  readonly namePosition?: { readonly line: number; readonly col: number };
  readonly diagnostics: readonly Diagnostic[];
  readonly targets: readonly TargetRef[];
  /** What the data-flow check reads, when the file has steps to check. */
  readonly flow?: ChainFlow;
}

const FOR_EACH_NAMES = new Set(['item', 'index']);

export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Parses and compiles one chain text. Pure: the same text and file name give the same result. `disk` keeps the parse. */
export function compileText(text: string, file: string, hash = hashText(text), disk?: DiskCache, maxBytes?: number): CompiledFile {
  const { document, diagnostics } = parseYaml(text, file, maxBytes === undefined ? undefined : { maxBytes }, disk);
  const max = DEFAULT_LOAD_LIMITS.maxDiagnostics;
  // Past the limit the file is noise already (the loader counted the rest): no compile on top.
  if (!document || diagnostics.length > max) return { file, hash, diagnostics, targets: [] };
  const compiled = capped(compileDocument(document, hash), max);
  if (!diagnostics.length) return compiled;
  // The loader still hands over a value after duplicate or forbidden keys so that the rest of the
  // file gets checked too; such a file never yields a plan.
  const { plan, ...rest } = compiled;
  const all = capDiagnostics([...diagnostics, ...compiled.diagnostics], max, file);
  return hasErrors(diagnostics) || !plan ? { ...rest, diagnostics: all } : { ...compiled, diagnostics: all };
}

function capped(compiled: CompiledFile, max: number): CompiledFile {
  return compiled.diagnostics.length > max ? { ...compiled, diagnostics: capDiagnostics([...compiled.diagnostics], max, compiled.file) } : compiled;
}

export function compileDocument(doc: LoadedYaml, hash: string): CompiledFile {
  const sink = new DiagnosticSink(doc.file, doc.sourceMap);
  const schemaErrors = checkChainSchema(doc.value, sink);
  const schemaOk = schemaErrors.length === 0;
  // What the schema refused is left out of what gets compiled (reported already, never a crash).
  const raw = dropIllTyped(doc.value, schemaErrors) as Partial<ToolchainChain> | null;
  const name = typeof raw?.name === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.name) ? raw.name : undefined;
  const base = { file: doc.file, hash, ...(name ? { name, namePosition: doc.sourceMap.valueAt('/name') } : {}) };
  if (name !== undefined && FORBIDDEN_KEYS.has(name)) sink.error('BAD_NAME', '/name', `chain name '${name}' is reserved (it names JavaScript's object machinery); rename the chain`);
  if (!raw || typeof raw !== 'object' || !Array.isArray(raw.steps)) return { ...base, diagnostics: sink.diagnostics, targets: [] };

  // Compile whatever is well-formed even when the schema check failed, so that one run of
  // `validate` reports every problem in the file, not only the first kind.
  const inputs = normaliseInputs(isRecord(raw.inputs) ? raw.inputs : undefined);
  for (const [input, spec] of Object.entries(isRecord(raw.inputs) ? raw.inputs : {})) {
    for (const p of schemaPatternProblems(spec, `/inputs/${input}`)) {
      sink.error('UNSUPPORTED_PATTERN', p.pointer, `input '${input}': pattern ${JSON.stringify(p.pattern)} cannot be matched in linear time: ${p.reason}`);
    }
  }
  const inputNames = new Set(inputs.names);
  const triggers = compileTriggers(raw.triggers, inputs, doc.sourceMap, sink);
  const lists: StepList[] = [wellFormed('steps', raw.steps)];
  if (Array.isArray(raw.on_failure)) lists.push(wellFormed('on_failure', raw.on_failure));
  if (Array.isArray(raw.finally)) lists.push(wellFormed('finally', raw.finally));
  const main = lists[0]!;
  const listOf = (list: ListName): StepList | undefined => lists.find((l) => l.list === list);
  const flow = deepFreeze(
    extractFlow(inputs.schema, main.steps, isRecord(raw.outputs) ? raw.outputs : undefined, doc.sourceMap, { onFailure: listOf('on_failure')?.steps, finally: listOf('finally')?.steps }),
  );

  // Step names are one set across steps, on_failure and finally: a result, an event or a stored
  // record names a step by its name alone.
  const named = new Map<string, string>();
  const compensated = main.steps.some((s) => s.raw.compensate !== undefined);
  const added = addedNames(lists.length > 1, listOf('finally') !== undefined, compensated);
  for (const { list, steps } of lists) {
    for (const { raw: s, index } of steps) {
      const at = `/${list}/${index}/name`;
      const first = named.get(s.name);
      if (first !== undefined) sink.error('DUPLICATE_NAME', at, `step name '${s.name}' is used twice (first at ${first})`);
      else named.set(s.name, list === 'steps' ? `step ${index + 1}` : `${list} step ${index + 1}`);
      if (inputNames.has(s.name)) sink.error('NAME_COLLISION', at, `step '${s.name}' has the same name as an input: '$.${s.name}' would be ambiguous`);
      if (added.has(s.name)) sink.error('NAME_COLLISION', at, `step '${s.name}' has the name failure handling gives ${added.get(s.name)}: '$.${s.name}' would be ambiguous; rename the step`);
      // As a key of results, events and stored runs it would reach object machinery, not data.
      if (FORBIDDEN_KEYS.has(s.name)) sink.error('BAD_NAME', at, `step name '${s.name}' is reserved (it names JavaScript's object machinery); rename the step`);
      checkHandlerStep(s, `/${list}/${index}`, list, sink);
    }
  }
  for (const name of inputs.names) if (added.has(name)) sink.error('NAME_COLLISION', `/inputs/${name}`, `input '${name}' has the name failure handling gives ${added.get(name)}: '$.${name}' would be ambiguous; rename the input`, { atKey: true });

  // What each list may read besides its own steps (no edge: all of it has ended when the list runs).
  const mainNames = main.steps.map((s) => s.raw.name);
  const reads: Record<ListName, ReadonlySet<string>> = {
    steps: inputNames,
    on_failure: new Set([...inputNames, ...mainNames, ERROR_NAME]),
    finally: new Set([...inputNames, ...mainNames, ERROR_NAME, STATUS_NAME]),
  };
  const compiled = lists.map((l) => compileList(l, reads[l.list], sink, doc));
  const targets = compiled.flatMap((c) => c.targets);
  const compensations = compileCompensations(main, new Set([...inputNames, ...mainNames, ERROR_NAME, THIS_NAME, THIS_INPUT_NAME]), sink, doc);
  for (const c of compensations) targets.push(...c.targets);

  let outputs: CompiledValue | undefined;
  if (isRecord(raw.outputs)) {
    const { value, problems } = compileValue(raw.outputs, '/outputs');
    for (const p of problems) sink.error(p.code, `/outputs${p.pointer}`, p.message, p.offset !== undefined ? { offset: p.offset } : {});
    const known = new Set([...mainNames, ...inputNames]);
    for (const ref of value.refs) {
      const r = { ...ref, pointer: `/outputs${ref.pointer}` };
      if (r.root !== undefined && !known.has(r.root)) unknownReference(r, 'outputs', known, sink);
    }
    outputs = value;
  }

  // A graph only makes sense over the full list of steps: indices are positions in the file.
  const graphs = compiled.map((c) => (c.allWellFormed ? buildGraph(c.nodes, [...orderEdges(c.nodes), ...c.edges], sink) : undefined));
  if (sink.failed || graphs.some((g) => g === undefined) || !schemaOk) return { ...base, diagnostics: sink.diagnostics, targets, flow };

  const planSteps = compiled.map((c, k) => completeSteps(c.bodies, graphs[k]!, doc));
  const mainSteps = planSteps[0]!;
  const chain = raw as ToolchainChain;
  const timeoutMs = parseDuration(chain.timeout);
  const identity = { name: chain.name, file: doc.file, hash: chainHash(doc.text, hash, raw.triggers !== undefined), flow };
  const handlerOf = (k: number): ChainPlan =>
    handlerPlan(identity, compiled[k]!.list as 'on_failure' | 'finally', planSteps[k]!, graphs[k]!, toolNames(compiled[k]!.targets), chainNames(compiled[k]!.targets));
  const onFailureAt = compiled.findIndex((c) => c.list === 'on_failure');
  const finallyAt = compiled.findIndex((c) => c.list === 'finally');
  const byStep: (ChainPlan | undefined)[] = new Array<ChainPlan | undefined>(mainSteps.length).fill(undefined);
  for (const c of compensations) {
    const step = completeSteps([c.body], { waitsFor: [[]], skipsWith: [[]], dependents: [[]] }, doc)[0]!;
    byStep[c.of] = handlerPlan(identity, 'compensate', [step], { order: [0], roots: [0] }, toolNames(c.targets), chainNames(c.targets));
  }
  const handlers: HandlerPlans | undefined =
    onFailureAt >= 0 || finallyAt >= 0 || compensations.length > 0
      ? Object.freeze({
          ...(onFailureAt >= 0 ? { onFailure: handlerOf(onFailureAt) } : {}),
          ...(finallyAt >= 0 ? { finally: handlerOf(finallyAt) } : {}),
          compensations: Object.freeze(byStep),
        })
      : undefined;
  const plan: ChainPlan = Object.freeze({
    name: chain.name,
    ...(chain.version !== undefined ? { version: chain.version } : {}),
    ...(chain.description !== undefined ? { description: chain.description } : {}),
    file: doc.file,
    hash: identity.hash,
    inputs,
    steps: Object.freeze(mainSteps),
    order: Object.freeze([...graphs[0]!.order]),
    roots: Object.freeze([...graphs[0]!.roots]),
    waitCounts: Object.freeze(mainSteps.map((s) => s.waitsFor.length)),
    mayWait: mainSteps.some((s) => s.target.kind === 'wait' || s.target.kind === 'chain' || s.repeat !== undefined),
    ...(outputs ? { outputs } : {}),
    ...(chain.concurrency !== undefined ? { concurrency: chain.concurrency } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    tools: deepFreeze(toolNames(targets)),
    chains: deepFreeze(chainNames(targets)),
    flow,
    ...(triggers.length ? { triggers: deepFreeze(triggers) } : {}),
    ...(handlers ? { handlers } : {}),
  });
  return { ...base, plan, diagnostics: sink.diagnostics, targets, flow };
}

type ListName = 'steps' | 'on_failure' | 'finally';

/** One list of steps in the file, with the steps the compiler can go on with. */
interface StepList {
  readonly list: ListName;
  readonly steps: readonly { readonly raw: RawStep; readonly index: number }[];
  readonly allWellFormed: boolean;
}

function wellFormed(list: ListName, given: readonly unknown[]): StepList {
  const steps: { raw: RawStep; index: number }[] = [];
  given.forEach((s, index) => {
    if (isRecord(s) && typeof s.name === 'string' && (typeof s.tool === 'string' || typeof s.chain === 'string' || isWellFormedAgent(s.agent) || isWellFormedWait(s))) {
      steps.push({ raw: s as unknown as RawStep, index });
    }
  });
  return { list, steps, allWellFormed: steps.length === given.length };
}

/** The names failure handling adds to the run context, and who gets them, for the collision check. */
function addedNames(handlers: boolean, hasFinally: boolean, compensated: boolean): Map<string, string> {
  const out = new Map<string, string>();
  if (handlers || compensated) out.set(ERROR_NAME, 'the run\'s error');
  if (hasFinally) out.set(STATUS_NAME, 'the run\'s status');
  if (compensated) {
    out.set(THIS_NAME, "a compensated step's output");
    out.set(THIS_INPUT_NAME, "a compensated step's input");
  }
  return out;
}

interface CompiledList {
  readonly list: ListName;
  readonly allWellFormed: boolean;
  readonly bodies: CompiledStepBody[];
  readonly nodes: StepNode[];
  readonly edges: Edge[];
  readonly targets: TargetRef[];
}

/** One list's steps: bodies, the DAG's nodes and edges (within the list), and the tools and chains they name. */
function compileList(l: StepList, outside: ReadonlySet<string>, sink: DiagnosticSink, doc: LoadedYaml): CompiledList {
  const own = new Map<string, number>();
  for (const { raw: s, index } of l.steps) if (!own.has(s.name)) own.set(s.name, index);
  const bodies: CompiledStepBody[] = [];
  const edges: Edge[] = [];
  const targets: TargetRef[] = [];
  const nodes: StepNode[] = [];
  const what = l.list === 'steps' ? 'step' : `${l.list} step`;
  for (const { raw: s, index } of l.steps) {
    const compiled = compileStep(s, index, sink, `/${l.list}/${index}`);
    // In finally, a failing step never stops the others: its dependents read { error }.
    const body = l.list === 'finally' && s.on_error === undefined ? { ...compiled.body, onError: 'continue' as const } : compiled.body;
    bodies.push(body);
    nodes.push({ name: s.name, pointer: body.pointer, parallel: body.parallel });
    for (const ref of compiled.refs) edges.push(...referenceEdges(ref, index, s, own, outside, `${what} '${s.name}'`, sink));
    (s.depends_on ?? []).forEach((dep, k) => {
      const at = `${body.pointer}/depends_on/${k}`;
      const from = own.get(dep);
      if (from === undefined) {
        const suggestion = didYouMean(dep, own.keys());
        const whose = l.list === 'steps' ? 'a step of this chain' : `a step of ${l.list} (the chain's steps have all ended when ${l.list} runs)`;
        sink.error('UNKNOWN_STEP', at, `${what} '${s.name}' depends on '${dep}', which is not ${whose}${suggestionSuffix(suggestion)}`, suggestion ? { suggestion } : {});
      } else edges.push({ from, to: index, kind: 'depends_on', pointer: at, text: dep });
    });
    targets.push(...bodyTargets(body, s.name, s, doc));
  }
  return { list: l.list, allWellFormed: l.allWellFormed, bodies, nodes, edges, targets };
}

/** The tools and chains a compiled step names, where, for checks against what is installed. */
function bodyTargets(body: CompiledStepBody, name: string, s: RawStep, doc: LoadedYaml): TargetRef[] {
  const out: TargetRef[] = [];
  const t = body.target;
  if (t.kind === 'agent') t.agent.tools.forEach((tool, k) => out.push(target('agent_tool', tool, name, `${body.pointer}/agent/tools/${k}`, doc)));
  else if (t.kind !== 'wait') out.push(target(t.kind, t.kind === 'tool' ? t.tool : t.chain, name, `${body.pointer}/${t.kind}`, doc));
  if (body.fallback?.kind === 'tool') {
    const at = s.fallback !== undefined ? 'fallback' : 'retry/fallback';
    out.push(target('tool', body.fallback.tool, name, `${body.pointer}/${at}/tool`, doc));
  }
  return out;
}

interface CompiledCompensation {
  /** The index of the step it compensates. */
  readonly of: number;
  readonly body: CompiledStepBody;
  readonly targets: TargetRef[];
}

/** Each step's `compensate`, compiled as a step of its own (`NAME~compensate`) that reads the run, `this` and `this_input`. */
function compileCompensations(main: StepList, reads: ReadonlySet<string>, sink: DiagnosticSink, doc: LoadedYaml): CompiledCompensation[] {
  const out: CompiledCompensation[] = [];
  for (const { raw: s, index } of main.steps) {
    const c = compensationStep(s);
    if (c === undefined) continue;
    const { body, refs } = compileStep(c, 0, sink, `/steps/${index}/compensate`);
    for (const ref of refs) {
      if (ref.root !== undefined && !reads.has(ref.root)) unknownReference(ref, `the compensation of step '${s.name}'`, reads, sink);
    }
    out.push({ of: index, body, targets: bodyTargets(body, c.name, c, doc) });
  }
  return out;
}

/** Compiled bodies with their place in the file and their part of the graph: the plan's steps. */
function completeSteps(bodies: readonly CompiledStepBody[], graph: Pick<Graph, 'waitsFor' | 'skipsWith' | 'dependents'>, doc: LoadedYaml): PlanStep[] {
  // The bodies are fresh objects from compileStep: completing them in place avoids a copy each.
  return bodies.map((b, k) => {
    const pos = doc.sourceMap.valueAt(b.pointer);
    const step: PlanStep = Object.assign(b, {
      line: pos.line,
      col: pos.col,
      waitsFor: Object.freeze(graph.waitsFor[k]!),
      skipsWith: Object.freeze(graph.skipsWith[k]!),
      dependents: Object.freeze(graph.dependents[k]!),
    });
    return Object.freeze(step);
  });
}

function toolNames(targets: readonly TargetRef[]): string[] {
  return unique(targets.filter((t) => t.kind === 'tool').map((t) => t.name));
}

function chainNames(targets: readonly TargetRef[]): string[] {
  return unique(targets.filter((t) => t.kind === 'chain').map((t) => t.name));
}

function referenceEdges(
  ref: PathRef,
  index: number,
  step: RawStep,
  own: ReadonlyMap<string, number>,
  outside: ReadonlySet<string>,
  who: string,
  sink: DiagnosticSink,
): Edge[] {
  if (ref.root === undefined) {
    // `$..x`, `$.*` or `$` may read any step: wait for everything above, as order would.
    return [...Array(index).keys()].map((from) => ({ from, to: index, kind: 'order' as const, pointer: ref.pointer, text: ref.source }));
  }
  if (step.for_each !== undefined && FOR_EACH_NAMES.has(ref.root) && !ref.pointer.endsWith('/for_each')) return [];
  const from = own.get(ref.root);
  if (from !== undefined) return [{ from, to: index, kind: 'reference', pointer: ref.pointer, text: ref.source }];
  if (!outside.has(ref.root)) unknownReference(ref, who, new Set([...own.keys(), ...outside]), sink);
  return [];
}

function unknownReference(ref: PathRef, who: string, known: ReadonlySet<string>, sink: DiagnosticSink): void {
  const root = ref.root!;
  const suggestion = didYouMean(root, known);
  const extra = FOR_EACH_NAMES.has(root) ? `; '$.${root}' exists only inside a step with for_each` : Object.hasOwn(ADDED_NAMES, root) ? `; ${ADDED_NAMES[root]}` : '';
  sink.error(
    'UNKNOWN_REFERENCE',
    ref.pointer,
    `${who} reads ${ref.source}, but there is no step or input named '${root}'${suggestionSuffix(suggestion)}${extra}`,
    suggestion ? { suggestion } : {},
  );
}

function target(kind: TargetRef['kind'], name: string, step: string, pointer: string, doc: LoadedYaml): TargetRef {
  const pos = doc.sourceMap.valueAt(pointer);
  return { kind, name, step, pointer, line: pos.line, col: pos.col };
}


function unique(names: string[]): string[] {
  return [...new Set(names)];
}

/** A waiting step the compiler can go on with (what else is wrong in it the schema reports). */
function isWellFormedWait(s: Record<string, unknown>): boolean {
  return s.sleep !== undefined || s.sleep_until !== undefined || (isRecord(s.wait_for) && typeof s.wait_for.event === 'string') || isRecord(s.approval);
}
