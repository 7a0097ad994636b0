import { createHash } from 'node:crypto';
import { didYouMean, hasErrors, suggestionSuffix, type Diagnostic } from '../common/errors.js';
import { compileValue } from '../expr/index.js';
import { parseDuration } from '../expr/duration.js';
import { FORBIDDEN_KEYS } from '../common/forbidden-keys.js';
import type { CompiledValue, PathRef } from '../expr/types.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { capDiagnostics, DEFAULT_LOAD_LIMITS, parseYaml } from '../loader/index.js';
import type { LoadedYaml } from '../loader/types.js';
import { buildGraph, orderEdges, type Edge, type StepNode } from './build-graph.js';
import type { ToolchainChain } from './chain-file.generated.js';
import { isWellFormedAgent } from './compile-agent.js';
import { chainHash } from './chain-hash.js';
import { compileTriggers } from './compile-triggers.js';
import { compileStep, type CompiledStepBody, type RawStep } from './compile-step.js';
import { deepFreeze } from './deep-freeze.js';
import { DiagnosticSink } from '../loader/diagnostic-sink.js';
import { normaliseInputs } from './normalise-inputs.js';
import type { ChainPlan, PlanStep } from './plan.js';
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
  const steps: { raw: RawStep; index: number }[] = [];
  raw.steps.forEach((s, index) => {
    if (isRecord(s) && typeof s.name === 'string' && (typeof s.tool === 'string' || typeof s.chain === 'string' || isWellFormedAgent(s.agent) || isWellFormedWait(s))) {
      steps.push({ raw: s as RawStep, index });
    }
  });
  const allWellFormed = steps.length === raw.steps.length;
  const flow = deepFreeze(extractFlow(inputs.schema, steps, isRecord(raw.outputs) ? raw.outputs : undefined, doc.sourceMap));

  const stepIndex = new Map<string, number>();
  for (const { raw: s, index } of steps) {
    const at = `/steps/${index}/name`;
    if (stepIndex.has(s.name)) sink.error('DUPLICATE_NAME', at, `step name '${s.name}' is used twice (first at step ${stepIndex.get(s.name)! + 1})`);
    else stepIndex.set(s.name, index);
    if (inputNames.has(s.name)) sink.error('NAME_COLLISION', at, `step '${s.name}' has the same name as an input: '$.${s.name}' would be ambiguous`);
    // As a key of results, events and stored runs it would reach object machinery, not data.
    if (FORBIDDEN_KEYS.has(s.name)) sink.error('BAD_NAME', at, `step name '${s.name}' is reserved (it names JavaScript's object machinery); rename the step`);
  }

  const bodies: CompiledStepBody[] = [];
  const edges: Edge[] = [];
  const targets: TargetRef[] = [];
  const nodes: StepNode[] = [];
  for (const { raw: s, index } of steps) {
    const { body, refs } = compileStep(s, index, sink);
    bodies.push(body);
    nodes.push({ name: s.name, pointer: body.pointer, parallel: body.parallel });
    for (const ref of refs) edges.push(...referenceEdges(ref, index, s, stepIndex, inputNames, sink));
    (s.depends_on ?? []).forEach((dep, k) => {
      const at = `${body.pointer}/depends_on/${k}`;
      const from = stepIndex.get(dep);
      if (from === undefined) {
        const suggestion = didYouMean(dep, stepIndex.keys());
        sink.error('UNKNOWN_STEP', at, `step '${s.name}' depends on '${dep}', which is not a step of this chain${suggestionSuffix(suggestion)}`, suggestion ? { suggestion } : {});
      } else edges.push({ from, to: index, kind: 'depends_on', pointer: at, text: dep });
    });
    const t = body.target;
    if (t.kind === 'agent') t.agent.tools.forEach((name, k) => targets.push(target('agent_tool', name, s.name, `${body.pointer}/agent/tools/${k}`, doc)));
    else if (t.kind !== 'wait') targets.push(target(t.kind, t.kind === 'tool' ? t.tool : t.chain, s.name, `${body.pointer}/${t.kind}`, doc));
    if (body.fallback?.kind === 'tool') {
      const at = s.fallback !== undefined ? 'fallback' : 'retry/fallback';
      targets.push(target('tool', body.fallback.tool, s.name, `${body.pointer}/${at}/tool`, doc));
    }
  }

  let outputs: CompiledValue | undefined;
  if (isRecord(raw.outputs)) {
    const { value, problems } = compileValue(raw.outputs, '/outputs');
    for (const p of problems) sink.error(p.code, `/outputs${p.pointer}`, p.message, p.offset !== undefined ? { offset: p.offset } : {});
    for (const ref of value.refs) {
      const r = { ...ref, pointer: `/outputs${ref.pointer}` };
      if (r.root !== undefined && !stepIndex.has(r.root) && !inputNames.has(r.root)) unknownReference(r, 'outputs', stepIndex, inputNames, sink);
    }
    outputs = value;
  }

  // The graph only makes sense over the full list of steps: indices are positions in the file.
  const graph = allWellFormed ? buildGraph(nodes, [...orderEdges(nodes), ...edges], sink) : undefined;
  if (sink.failed || !graph || !schemaOk) return { ...base, diagnostics: sink.diagnostics, targets, flow };

  // The bodies are fresh objects from compileStep: completing them in place avoids a copy each.
  const planSteps: PlanStep[] = bodies.map((b) => {
    const pos = doc.sourceMap.valueAt(b.pointer);
    const step: PlanStep = Object.assign(b, {
      line: pos.line,
      col: pos.col,
      waitsFor: Object.freeze(graph.waitsFor[b.index]!),
      skipsWith: Object.freeze(graph.skipsWith[b.index]!),
      dependents: Object.freeze(graph.dependents[b.index]!),
    });
    return Object.freeze(step);
  });
  const chain = raw as ToolchainChain;
  const timeoutMs = parseDuration(chain.timeout);
  const plan: ChainPlan = Object.freeze({
    name: chain.name,
    ...(chain.version !== undefined ? { version: chain.version } : {}),
    ...(chain.description !== undefined ? { description: chain.description } : {}),
    file: doc.file,
    hash: chainHash(doc.text, hash, raw.triggers !== undefined),
    inputs,
    steps: Object.freeze(planSteps),
    order: Object.freeze([...graph.order]),
    roots: Object.freeze([...graph.roots]),
    waitCounts: Object.freeze(planSteps.map((s) => s.waitsFor.length)),
    mayWait: planSteps.some((s) => s.target.kind === 'wait' || s.target.kind === 'chain' || s.repeat !== undefined),
    ...(outputs ? { outputs } : {}),
    ...(chain.concurrency !== undefined ? { concurrency: chain.concurrency } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    tools: deepFreeze(unique(targets.filter((t) => t.kind === 'tool').map((t) => t.name))),
    chains: deepFreeze(unique(targets.filter((t) => t.kind === 'chain').map((t) => t.name))),
    flow,
    ...(triggers.length ? { triggers: deepFreeze(triggers) } : {}),
  });
  return { ...base, plan, diagnostics: sink.diagnostics, targets, flow };
}

function referenceEdges(
  ref: PathRef,
  index: number,
  step: RawStep,
  stepIndex: Map<string, number>,
  inputNames: Set<string>,
  sink: DiagnosticSink,
): Edge[] {
  if (ref.root === undefined) {
    // `$..x`, `$.*` or `$` may read any step: wait for everything above, as order would.
    return [...Array(index).keys()].map((from) => ({ from, to: index, kind: 'order' as const, pointer: ref.pointer, text: ref.source }));
  }
  if (step.for_each !== undefined && FOR_EACH_NAMES.has(ref.root) && !ref.pointer.endsWith('/for_each')) return [];
  const from = stepIndex.get(ref.root);
  if (from !== undefined) return [{ from, to: index, kind: 'reference', pointer: ref.pointer, text: ref.source }];
  if (!inputNames.has(ref.root)) unknownReference(ref, `step '${step.name}'`, stepIndex, inputNames, sink);
  return [];
}

function unknownReference(ref: PathRef, who: string, stepIndex: Map<string, number>, inputNames: Set<string>, sink: DiagnosticSink): void {
  const root = ref.root!;
  const suggestion = didYouMean(root, [...stepIndex.keys(), ...inputNames]);
  const extra = FOR_EACH_NAMES.has(root) ? `; '$.${root}' exists only inside a step with for_each` : '';
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
