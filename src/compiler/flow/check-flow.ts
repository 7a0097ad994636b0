import { didYouMean, suggestionSuffix, type Diagnostic, type ErrorCode, type Severity } from '../../common/errors.js';
import { isRecord, type JsonSchema } from '../../common/json.js';
import type { ChainFlow, FlowEntry, FlowValue, StepFlow } from './flow-facts.js';
import { article, itemSchema, resolveValue, stepOutput, type Scope, type Signatures } from './resolve-value.js';
import { describeTypes, expectsJsonPath, fits, typeOfValue, typesOf } from './schema-shape.js';

// `validate` type-checks the data flow of a chain against the tools installed. Each
// input_map key must be a parameter of the tool (or the sub-chain's inputs), every required one
// given, each literal must fit its parameter, and each reference must name a field its producer
// declares, of a type that fits. A number where text is wanted is a warning (the registry
// coerces it); an object where a number is wanted is an error. Problems sit at the offending key.

export interface FlowCheck {
  readonly diagnostics: readonly Diagnostic[];
  /** Pointers of values reported as LITERAL_JSONPATH: the compiler's UNKNOWN_REFERENCE there says less. */
  readonly supersedes: ReadonlySet<string>;
}

interface Ctx {
  readonly file: string;
  readonly scope: Scope;
  readonly out: Diagnostic[];
  readonly supersedes: Set<string>;
}

/** `$.error` of a handler: the run's error. */
const ERROR_SCHEMA: JsonSchema = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, step: { type: 'string' } } };
/** `$.status` of a finally step: how the run ended. */
const STATUS_SCHEMA: JsonSchema = { type: 'string', enum: ['succeeded', 'failed', 'compensation_failed', 'cancelled'] };

export function checkFlow(flow: ChainFlow, file: string, signatures: Signatures): FlowCheck {
  const out: Diagnostic[] = [];
  const supersedes = new Set<string>();
  const base = new Map<string, JsonSchema>();
  const inputProps = isRecord(flow.inputs.properties) ? flow.inputs.properties : {};
  for (const [name, schema] of Object.entries(inputProps)) if (isRecord(schema)) base.set(name, schema);
  for (const step of flow.steps) base.set(step.name, stepOutput(step, signatures));
  const check = (step: StepFlow, scope: Scope): void => checkListStep(step, scope, { file, scope, out, supersedes }, signatures);
  for (const step of flow.steps) {
    check(step, base);
    // A compensation reads the run, the run's error, and the step's own output and input.
    if (step.compensate) check(step.compensate, new Map([...base, ['error', ERROR_SCHEMA], ['this', base.get(step.name)!], ['this_input', inputSchema(step, base)]]));
  }
  // A handler list reads the run, `error` (and in finally `status`), and its own steps.
  for (const [steps, added] of [
    [flow.onFailure, [['error', ERROR_SCHEMA]]],
    [flow.finally, [['error', ERROR_SCHEMA], ['status', STATUS_SCHEMA]]],
  ] as const) {
    if (!steps) continue;
    const scope = new Map<string, JsonSchema>([...base, ...added]);
    for (const step of steps) scope.set(step.name, stepOutput(step, signatures));
    for (const step of steps) check(step, scope);
  }
  return { diagnostics: out, supersedes };
}

/** One step against the names in scope; a for_each step's `$.item` and `$.index` from its items. */
function checkListStep(step: StepFlow, base: Scope, at: Ctx, signatures: Signatures): void {
  let scope: Scope = base;
  const ctx = (s: Scope): Ctx => ({ ...at, scope: s });
  if (step.forEach) {
    const items = resolveValue(step.forEach.value, base);
    const where = { ...step.forEach, key: 'for_each', pointer: `${step.pointer}/for_each` };
    if (items.problem) report(ctx(base), 'UNKNOWN_FIELD', 'error', where, items.problem.message, items.problem.suggestion);
    const types = typesOf(items.schema);
    if (types && !types.has('array')) report(ctx(base), 'TYPE_MISMATCH', 'error', where, `for_each of step '${step.name}' needs an array, but ${sourceOf(step.forEach.value)} is ${article(describeTypes(types))}`);
    scope = new Map([...base, ['item', itemSchema(items.schema)], ['index', { type: 'integer' }]]);
  }
  checkStep(step, ctx(scope), signatures);
}

/** `$.this_input` of a step's compensation: its input_map resolved (per element, for a for_each step). */
function inputSchema(step: StepFlow, base: Scope): JsonSchema {
  const scope: Scope = step.forEach ? new Map([...base, ['item', itemSchema(resolveValue(step.forEach.value, base).schema)], ['index', { type: 'integer' }]]) : base;
  const properties: Record<string, JsonSchema> = {};
  for (const e of step.args) properties[e.key] = resolveValue(e.value, scope).schema;
  const one: JsonSchema = step.target.kind === 'tool' || step.target.kind === 'chain' ? { type: 'object', properties } : { type: 'object' };
  return step.forEach ? { type: 'array', items: one } : one;
}

function checkStep(step: StepFlow, ctx: Ctx, signatures: Signatures): void {
  const params = parametersOf(step.target, signatures);
  const who = step.target.kind === 'chain' ? `chain '${step.target.name}'` : step.target.kind === 'tool' ? `tool '${step.target.name}'` : step.target.kind === 'wait' ? 'the wait' : 'the agent';
  if (params) checkObject(step.args, params, who, ctx, { step });
  else for (const e of step.args) checkEntry(e, undefined, who, ctx);
  const fb = step.fallback;
  if (!fb) return;
  const fbTool = fb.tool !== undefined ? signatures.tool(fb.tool) : undefined;
  const fbParams = fb.tool !== undefined ? (fbTool ? (fbTool.parameters ?? { type: 'object' }) : undefined) : params;
  const fbWho = fb.tool !== undefined ? `tool '${fb.tool}'` : who;
  if (fbParams) checkObject(fb.args, fbParams, fbWho, ctx, { partial: true });
  else for (const e of fb.args) checkEntry(e, undefined, fbWho, ctx);
  // A fallback tool gets the step's arguments with the overrides merged over them.
  if (fb.tool !== undefined && fbParams) {
    const given = new Set([...step.args, ...fb.args].map((e) => e.key));
    const missing = requiredOf(fbParams).filter((k) => !given.has(k) && !hasDefault(fbParams, k));
    if (missing.length) {
      const at = { key: 'fallback', pointer: `${fb.pointer}/tool`, line: step.line, col: step.col };
      report(ctx, 'MISSING_PARAMETER', 'error', at, `the fallback ${fbWho} of step '${step.name}' needs ${list(missing)}, which neither the step's input_map nor the fallback's gives`);
    }
  }
}

function parametersOf(target: StepFlow['target'], signatures: Signatures): JsonSchema | undefined {
  if (target.kind === 'tool') {
    const sig = signatures.tool(target.name);
    return sig ? (sig.parameters ?? { type: 'object' }) : undefined;
  }
  return target.kind === 'chain' ? signatures.chain(target.name)?.inputs : undefined;
}

/** Entries given for an object parameter (a step's arguments, or a nested object literal). */
function checkObject(entries: readonly FlowEntry[], schema: JsonSchema, who: string, ctx: Ctx, where: { step?: StepFlow; at?: FlowEntry; partial?: boolean }): void {
  const props = isRecord(schema.properties) ? schema.properties : {};
  const names = Object.keys(props);
  for (const e of entries) {
    const own = Object.hasOwn(props, e.key) && isRecord(props[e.key]) ? (props[e.key] as JsonSchema) : undefined;
    if (own) {
      checkEntry(e, own, who, ctx);
      continue;
    }
    const suggestion = didYouMean(e.key, names);
    const allowed = names.length ? `; its parameters are ${names.join(', ')}` : `; it declares no parameters`;
    const what = where.at ? `'${where.at.key}' of ${who}` : who;
    // A schema that forbids other keys fails every call. One that declares its parameters but
    // leaves other keys open passes this one on unchecked, which is a typo more often than not;
    // one that declares none, or gives other keys a schema or a pattern, takes any key.
    const extra = schema.additionalProperties;
    if (matchesPattern(schema, e.key)) {
      // Declared by a pattern.
    } else if (extra === false) report(ctx, 'UNKNOWN_PARAMETER', 'error', e, `${what} has no parameter '${e.key}'${suggestionSuffix(suggestion)}${allowed}`, suggestion);
    else if (!isRecord(extra) && names.length > 0) {
      report(ctx, 'UNDECLARED_PARAMETER', 'warning', e, `${what} declares no parameter '${e.key}'${suggestionSuffix(suggestion)}${allowed}; its schema lets other keys through, so the value is passed on unchecked`, suggestion);
    }
    checkEntry(e, isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined, who, ctx);
  }
  if (where.partial) return;
  const given = new Set(entries.map((e) => e.key));
  const missing = requiredOf(schema).filter((k) => !given.has(k) && !hasDefault(schema, k));
  if (!missing.length) return;
  const step = where.step;
  const rescued = step?.fallback && (step.fallback.hasOutput || step.fallback.tool !== undefined || missing.every((k) => step.fallback!.args.some((a) => a.key === k)));
  const at = where.at ?? (step ? { key: 'input_map', pointer: `${step.pointer}/input_map`, ...step.argsAt } : undefined);
  if (!at) return;
  const subject = where.at ? `'${where.at.key}' for ${who}` : `step '${step!.name}' calls ${who} without`;
  const message = where.at ? `${subject} lacks ${list(missing)}, which it requires` : `${subject} ${list(missing)}, which it requires`;
  report(ctx, 'MISSING_PARAMETER', rescued ? 'warning' : 'error', at, rescued ? `${message}; every first attempt fails validation and the fallback takes over` : message);
}

/** A key one of the schema's `patternProperties` admits (a pattern that is no valid RegExp admits nothing). */
function matchesPattern(schema: JsonSchema, key: string): boolean {
  if (!isRecord(schema.patternProperties)) return false;
  return Object.keys(schema.patternProperties).some((pattern) => {
    try {
      return new RegExp(pattern, 'u').test(key);
    } catch {
      return false;
    }
  });
}

function checkEntry(e: FlowEntry, param: JsonSchema | undefined, who: string, ctx: Ctx): void {
  const value = e.value;
  if (param && value.kind === 'object' && isRecord(param.properties)) return checkObject(value.entries, param, who, ctx, { at: e });
  const resolved = resolveValue(value, ctx.scope);
  if (param && value.kind === 'path' && expectsJsonPath(param) && (resolved.unknownRoot || value.root === undefined)) {
    ctx.supersedes.add(e.pointer);
    report(ctx, 'LITERAL_JSONPATH', 'error', e, `'${e.key}' of ${who} takes a JSONPath as text, but '${value.source}' is read as a reference into the run; write '$${value.source}' to pass it as it is`);
    return;
  }
  if (resolved.problem) return report(ctx, 'UNKNOWN_FIELD', 'error', e, `'${e.key}': ${resolved.problem.message}`, resolved.problem.suggestion);
  if (!param) return;
  if (value.kind === 'literal') return checkLiteral(e, value.value, param, who, ctx);
  const fit = fits(typesOf(resolved.schema), typesOf(param));
  if (fit.kind === 'ok') return;
  const text = value.kind === 'path' ? value.source : value.kind === 'template' ? 'the template' : `the ${value.kind}`;
  const want = describeTypes(fit.to);
  const hint = expectsJsonPath(param) && value.kind === 'path' ? `; to pass the JSONPath itself, write '$${value.source}'` : '';
  if (fit.kind === 'coerced') {
    report(ctx, 'TYPE_MISMATCH', 'warning', e, `'${e.key}' of ${who} is ${article(want)}, and ${text} may be ${article(describeTypes(fit.from))}; it is converted when it can be, and fails validation otherwise${hint}`);
  } else {
    report(ctx, 'TYPE_MISMATCH', 'error', e, `'${e.key}' of ${who} is ${article(want)}, but ${text} is ${article(describeTypes(fit.from))}${hint}`);
  }
}

function checkLiteral(e: FlowEntry, value: unknown, param: JsonSchema, who: string, ctx: Ctx): void {
  if (Array.isArray(param.enum) && !param.enum.some((x) => JSON.stringify(x) === JSON.stringify(value))) {
    const options = param.enum.map((x) => JSON.stringify(x));
    const suggestion = typeof value === 'string' ? didYouMean(value, param.enum.filter((x): x is string => typeof x === 'string')) : undefined;
    return report(ctx, 'TYPE_MISMATCH', 'error', e, `'${e.key}' of ${who} is one of ${options.join(', ')}, not ${JSON.stringify(value)}${suggestionSuffix(suggestion)}`, suggestion);
  }
  const fit = fits(new Set([typeOfValue(value)]), typesOf(param));
  if (fit.kind === 'ok') return;
  const want = describeTypes(fit.to);
  const got = `${JSON.stringify(value)} is ${article(describeTypes(fit.from))}`;
  if (fit.kind === 'coerced' && typeof value !== 'string') {
    report(ctx, 'TYPE_MISMATCH', 'warning', e, `'${e.key}' of ${who} is ${article(want)}, and ${got}; quote it to pass it as text`);
  } else if (fit.kind === 'coerced' && coercesTo(value as string, fit.to)) {
    return;
  } else {
    report(ctx, 'TYPE_MISMATCH', 'error', e, `'${e.key}' of ${who} is ${article(want)}, but ${got}`);
  }
}

/** Ajv's coercion of a text literal: numbers, booleans and null from their usual spellings. */
function coercesTo(text: string, to: ReadonlySet<string>): boolean {
  return ((to.has('number') || to.has('integer')) && text.trim() !== '' && Number.isFinite(Number(text)) && (to.has('number') || Number.isInteger(Number(text)))) || (to.has('boolean') && (text === 'true' || text === 'false')) || (to.has('null') && text === '');
}

/** A parameter that wants a JSONPath as text: its pattern requires a leading `$`. */
function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
}

function hasDefault(schema: JsonSchema, key: string): boolean {
  const props = isRecord(schema.properties) ? schema.properties : {};
  const p = props[key];
  return isRecord(p) && 'default' in p;
}

function sourceOf(value: FlowValue): string {
  return value.kind === 'path' ? value.source : 'it';
}

function list(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(', ');
}

function report(ctx: Ctx, code: ErrorCode, severity: Severity, at: { pointer: string; line: number; col: number }, message: string, suggestion?: string): void {
  ctx.out.push({ code, severity, message, file: ctx.file, pointer: at.pointer, line: at.line, col: at.col, ...(suggestion ? { suggestion } : {}) });
}
