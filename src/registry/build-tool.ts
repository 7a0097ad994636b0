import { isRecord, type JsonSchema } from '../common/json.js';
import { defineOwn } from '../common/define-own.js';
import { type Diagnostic, ToolchainError } from '../common/errors.js';
import { ExitAttempt } from '../common/exit-attempt.js';
import { raceSignal } from '../common/race.js';
import type { ValidateFunction } from 'ajv';
import { TOP_LEVEL, type CompiledSchema, type SchemaCompiler, type SchemaUse } from './schema-compiler.js';
import { problemsError, toProblems } from './argument-problems.js';
import { canonicalJson } from './canonical-json.js';
import { flatJsonBytes, walkJson } from './check-json.js';
import { createCircuitBreaker, type CircuitBreaker } from './circuit-breaker.js';
import { parseDuration } from '../expr/duration.js';
import { planCopy, planFreshCopy } from './copy-args.js';
import { restrictEnv } from './restrict-env.js';
import { createResultCache, MISS, type ResultCache } from './result-cache.js';
import { truncateResult } from './truncate-result.js';
import type { DirectCall, LoadMode, PrepareResult, Tool, ToolContext, ToolDefinition, ToolHandler, ToolOwner } from './types.js';

// A tool: a ToolDefinition built into a Tool once, and what each call of it does — `prepare` (a
// copy of the arguments the handler may own, planned in copy-args.ts, then validation) and
// `invoke` (cache → circuit breaker → handler → result checks). In that order below: building,
// invoking, checking the result.
//
// A ToolDefinition becomes a Tool once: validators compiled, copy strategy chosen, cache and
// circuit breaker created. Everything a call needs afterwards is a closure on the Tool object,
// which is frozen and never changes; a new version is a new Tool.

export interface BuildSettings {
  readonly limitBytes: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => number;
  /** `eager` compiles validators now; otherwise schemas are meta-checked now and compiled on first use. */
  readonly load: LoadMode;
  readonly schemas: SchemaCompiler;
}

export interface BuiltTool {
  readonly tool: Tool;
  /** Strict-mode complaints about its schemas (the tool works; the schema has a likely typo). */
  readonly warnings: readonly Diagnostic[];
}

/** Letters, digits, `_` and `-`, starting with a letter or `_`: usable as a model's function name. */
export const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const DEFAULT_PARAMETERS: JsonSchema = Object.freeze({ type: 'object' });
const NOT_AN_OBJECT: PrepareResult = Object.freeze({
  ok: false,
  problems: Object.freeze([{ path: '', message: 'the arguments must be a JSON object', expected: 'object' }]),
});

function fail(message: string, pointer = ''): never {
  throw new ToolchainError('PLUGIN_INVALID', message, [{ code: 'PLUGIN_INVALID', severity: 'error', message, pointer }]);
}

interface SchemaHandle {
  /** The compiled validator: compiled now, or on the first call when schemas are lazy. */
  readonly get: () => ValidateFunction;
  readonly warnings: readonly string[];
}

function compile(name: string, schema: unknown, key: 'parameters' | 'returns', use: SchemaUse, settings: BuildSettings): SchemaHandle {
  if (!isRecord(schema)) {
    fail(`tool '${name}': \`${key}\` must be a JSON Schema object`, `/${key}`);
  }
  const invalid = (error: unknown): never => fail(`tool '${name}': \`${key}\` is not a valid JSON Schema: ${(error as Error).message}`, `/${key}`);
  const { schemas } = settings;
  if (settings.load !== 'eager') {
    try {
      schemas.check(schema);
    } catch (error) {
      invalid(error);
    }
    // What the meta-schema cannot see (a pattern JavaScript's RegExp refuses) shows when the
    // schema compiles: that call fails with PLUGIN_INVALID, and so does every later one.
    let compiled: ValidateFunction | undefined;
    let failure: ToolchainError | undefined;
    const get = (): ValidateFunction => {
      if (compiled) return compiled;
      if (failure) throw failure;
      try {
        return (compiled = schemas.compile(schema, use).validate);
      } catch (error) {
        const message = `tool '${name}': \`${key}\` is not a schema the validator can compile: ${(error as Error).message}`;
        throw (failure = new ToolchainError('PLUGIN_INVALID', message));
      }
    };
    return { get, warnings: [] };
  }
  let compiled: CompiledSchema;
  try {
    compiled = schemas.compile(schema, use);
  } catch (error) {
    return invalid(error);
  }
  return { get: () => compiled.validate, warnings: compiled.warnings };
}

/** A manifest duration means what a chain's does (a number is seconds, a string carries its unit; never zero). */
function optionalMs(name: string, value: unknown, key: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined) fail(`tool '${name}': \`${key}\` must be a positive number of seconds or a string like 250ms, 2s, 10m`, `/${key.replace('.', '/')}`);
  return ms;
}

export function buildTool(def: ToolDefinition, owner: ToolOwner | undefined, settings: BuildSettings): BuiltTool {
  const name: unknown = def?.name;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    fail(`a tool name must be letters, digits, '_' or '-' (starting with a letter or '_'), not ${JSON.stringify(name)}`, '/name');
  }
  if (typeof def.handler !== 'function') fail(`tool '${name}': \`handler\` must be a function`, '/handler');
  const qualifiedName = owner ? `${owner.plugin}/${name}` : name;

  const parameters = def.parameters ?? DEFAULT_PARAMETERS;
  const params = compile(qualifiedName, parameters, 'parameters', 'arguments', settings);
  const returns = def.returns === undefined ? undefined : compile(qualifiedName, def.returns, 'returns', 'results', settings);
  const timeoutMs = optionalMs(qualifiedName, def.timeout, 'timeout');
  const ttlMs = def.cache === undefined ? undefined : optionalMs(qualifiedName, def.cache.ttl, 'cache.ttl');
  const breakerDef = def.circuit_breaker;
  let breakerSettings: { failures: number; resetAfterMs: number } | undefined;
  if (breakerDef !== undefined) {
    if (!Number.isInteger(breakerDef.failures) || breakerDef.failures < 1) {
      fail(`tool '${qualifiedName}': \`circuit_breaker.failures\` must be a whole number of at least 1`, '/circuit_breaker/failures');
    }
    breakerSettings = { failures: breakerDef.failures, resetAfterMs: optionalMs(qualifiedName, breakerDef.reset_after, 'circuit_breaker.reset_after')! };
  }

  let validate: ValidateFunction | undefined;
  const copyArgs = planCopy(parameters);
  const copyFresh = planFreshCopy(parameters);
  const prepare = (args: Record<string, unknown>, fresh?: boolean): PrepareResult => {
    if (!isRecord(args)) return NOT_AN_OBJECT;
    const copy = fresh === true ? copyFresh(args) : copyArgs(args);
    validate ??= params.get();
    if (validate(copy, TOP_LEVEL)) return { ok: true, args: copy };
    return { ok: false, problems: toProblems(validate.errors) };
  };

  const parts = {
    handler: def.handler,
    rules: { tool: qualifiedName, limitBytes: settings.limitBytes, truncate: def.truncate === true, ...(returns ? { returns: returns.get } : {}) },
    ...(ttlMs !== undefined ? { cache: createResultCache(ttlMs, settings.now) } : {}),
    ...(breakerSettings ? { breaker: createCircuitBreaker({ ...breakerSettings, now: settings.now }) } : {}),
    ...(breakerDef?.stale_on_open ? { stale: new Map<string, string>() } : {}),
  };
  const invoke = createInvoke(parts);
  const direct = createDirect(parts);

  const tool: Tool = Object.freeze({
    name,
    qualifiedName,
    ...(owner ? { plugin: owner.plugin } : {}),
    version: owner?.version ?? '0.0.0',
    description: def.description ?? '',
    parameters,
    ...(def.returns !== undefined ? { returns: def.returns } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    dangerous: def.dangerous === true,
    truncates: def.truncate === true,
    describe: `tool '${qualifiedName}'`,
    env: restrictEnv([...(owner?.env ?? []), ...(def.env ?? [])], settings.env),
    prepare,
    invoke,
    ...(direct ? { direct } : {}),
  });

  const warnings: Diagnostic[] = [];
  for (const [key, compiled] of [['parameters', params], ['returns', returns]] as const) {
    for (const message of compiled?.warnings ?? []) {
      warnings.push({ code: 'SCHEMA_INVALID', severity: 'warning', message: `tool '${qualifiedName}' \`${key}\`: ${message}`, pointer: `/${key}` });
    }
  }
  return { tool, warnings };
}


// One call of a tool, in order: cache → circuit breaker → handler → result checks → record.
// Arguments arrive already prepared (validated, defaults filled): the call unit calls
// Tool.prepare first, and approval for dangerous tools sits between the two.
//
// The call unit (src/call) enforces timeouts by racing the call, so the common path never touches
// `ctx.signal` (its AbortController is made lazily: building one costs microseconds). Only a tool
// with a circuit breaker listens for the abort, so that a timed-out call counts as a failure even
// when its handler ignores the signal and never settles. What a handler throws goes out as it is:
// the call unit classifies it.

interface InvokeParts {
  readonly handler: ToolHandler;
  readonly rules: ResultRules;
  readonly cache?: ResultCache;
  readonly breaker?: CircuitBreaker;
  /** With `stale_on_open`: the last good result (JSON) per arguments, served while the circuit is open. */
  readonly stale?: Map<string, string>;
}

const STALE_ENTRIES = 100;

function callHandler(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  try {
    return Promise.resolve(parts.handler(args, ctx));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * callHandler, settling as soon as the signal aborts even if the handler never does: a breaker
 * must count a timed-out call that never returns as a failure.
 */
function callHandlerUntilAborted(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  return raceSignal(callHandler(parts, args, ctx), ctx.signal).catch((error: unknown) => {
    if (!ctx.signal.aborted || error !== ctx.signal.reason) throw error;
    throw error instanceof ToolchainError ? error : new ToolchainError('ABORTED', `the call to tool '${parts.rules.tool}' was cancelled`);
  });
}

/** A handler that tried to end the process (the CLI and servers turn process.exit into a throw). */
function exited(tool: string, attempt: ExitAttempt): ToolchainError {
  return new ToolchainError(
    'TOOL_CRASHED',
    `tool '${tool}' called process.exit(${attempt.exitCode === undefined ? '' : String(attempt.exitCode)}); plugin code may not end the engine's process (isolation: worker contains it)`,
  );
}

/** A cancellation by the caller says nothing about the tool's health; a timeout does. */
function countsAsFailure(error: unknown): boolean {
  return !(error instanceof ToolchainError && error.code === 'ABORTED');
}

/** A tool with no cache, breaker or stale results needs nothing around its handler but the checks: it can be called directly. */
function createDirect(parts: InvokeParts): DirectCall | undefined {
  if (parts.cache !== undefined || parts.breaker !== undefined || parts.stale !== undefined) return undefined;
  const { handler, rules } = parts;
  return {
    call: handler,
    check: (result) => checkedValue(result, rules),
    fail: (thrown) => (thrown instanceof ExitAttempt ? exited(rules.tool, thrown) : thrown),
  };
}

function createInvoke(parts: InvokeParts): (args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown> {
  const { cache, breaker, stale, rules } = parts;
  const keyed = cache !== undefined || stale !== undefined;

  return async (args, ctx) => {
    const key = keyed ? canonicalJson(args) : '';
    if (cache) {
      const hit = cache.get(key);
      if (hit !== MISS) return hit;
    }
    if (breaker && !breaker.tryPass()) {
      const last = stale?.get(key);
      if (last !== undefined) return JSON.parse(last) as unknown;
      throw new ToolchainError(
        'CIRCUIT_OPEN',
        `tool '${rules.tool}' failed too many times in a row; its circuit breaker is open and calls fail fast until it resets`,
      );
    }
    let checked;
    try {
      checked = checkResult(await (breaker ? callHandlerUntilAborted : callHandler)(parts, args, ctx), rules);
    } catch (thrown) {
      const error = thrown instanceof ExitAttempt ? exited(rules.tool, thrown) : thrown;
      if (breaker) {
        if (countsAsFailure(error)) breaker.onFailure();
        else breaker.release();
      }
      throw error;
    }
    breaker?.onSuccess();
    if (keyed) {
      const json = checked.json ?? JSON.stringify(checked.value);
      cache?.set(key, json);
      if (stale) {
        stale.delete(key);
        if (stale.size >= STALE_ENTRIES) stale.delete(stale.keys().next().value as string);
        stale.set(key, json);
      }
    }
    return checked.value;
  };
}

// A handler's result on its way out: JSON (no undefined, cycles, BigInt, functions), the
// `returns` schema, then the size limit (or `truncate`). Serialising costs more than most tool
// calls' bookkeeping, so it happens only when the size bound from the walk could exceed the limit,
// when a Date-like value needs normalising, or when a cache needs the text.

interface ResultRules {
  readonly tool: string;
  readonly limitBytes: number;
  readonly truncate: boolean;
  /** The `returns` validator, compiled on first use when schemas are lazy. */
  readonly returns?: () => ValidateFunction;
}

interface CheckedResult {
  readonly value: unknown;
  /** The JSON text, when it had to be produced anyway. */
  readonly json?: string;
}

const MIB = 1024 * 1024;

function size(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** RESULT_INVALID for a result that is not JSON: where (a JSON pointer) and why. */
export function notJsonError(tool: string, path: string, reason: string): ToolchainError {
  const where = path === '' ? '' : ` at ${path}`;
  return new ToolchainError('RESULT_INVALID', `tool '${tool}' returned a result that is not JSON${where}: ${reason}`, [
    { code: 'RESULT_INVALID', severity: 'error', message: reason, pointer: path },
  ]);
}

/** Throws RESULT_INVALID or RESULT_TOO_LARGE; otherwise the value to hand on, with its JSON text when that had to be made. */
function checkResult(result: unknown, rules: ResultRules): CheckedResult {
  const text: JsonText = { json: undefined };
  const value = checkedValue(result, rules, text);
  return text.json === undefined ? { value } : { value, json: text.json };
}

/** Where checkedValue leaves the JSON text it had to make (a cache stores it). */
interface JsonText {
  json: string | undefined;
}

/**
 * checkResult's work, returning the value alone: the direct call of a quick tool (createDirect)
 * needs nothing else, and a wrapper object per call was a tenth of what such a step allocated.
 */
function checkedValue(result: unknown, rules: ResultRules, text?: JsonText): unknown {
  if (result === undefined) {
    throw new ToolchainError(
      'RESULT_INVALID',
      `tool '${rules.tool}' returned undefined; a handler must return a JSON value (return null for "nothing")`,
    );
  }
  let value: unknown = result;
  let json: string | undefined;
  let maxBytes: number;
  if (typeof result === 'object' && result !== null) {
    const flat = flatJsonBytes(result);
    if (flat !== undefined) maxBytes = flat;
    else {
      const check = walkJson(result);
      if (!check.ok) throw notJsonError(rules.tool, check.path, check.reason);
      maxBytes = check.maxBytes;
      if (check.needsNormalising) {
        json = JSON.stringify(result);
        value = JSON.parse(json) as unknown;
      }
    }
  } else if (typeof result === 'number') {
    if (!Number.isFinite(result)) throw notJsonError(rules.tool, '', `${result} is not a JSON number`);
    maxBytes = 24;
  } else if (typeof result === 'string') {
    maxBytes = result.length * 6 + 2;
  } else if (typeof result === 'boolean' || result === null) {
    maxBytes = 5;
  } else {
    throw notJsonError(rules.tool, '', `a ${typeof result} is not JSON`);
  }

  const validate = rules.returns?.();
  if (validate && !validate(value, TOP_LEVEL)) {
    throw problemsError('RESULT_INVALID', rules.tool, toProblems(validate.errors, 'the result'));
  }

  if (maxBytes > rules.limitBytes) {
    json ??= JSON.stringify(value);
    const bytes = Buffer.byteLength(json);
    if (bytes > rules.limitBytes) {
      if (!rules.truncate) {
        throw new ToolchainError(
          'RESULT_TOO_LARGE',
          `tool '${rules.tool}' returned ${size(bytes)} of JSON, over the ${size(rules.limitBytes)} limit; ` +
            'return less, or declare `truncate: true` to have it cut and marked',
        );
      }
      value = truncateResult(value, bytes, rules.limitBytes);
      json = undefined;
    }
  }
  if (text !== undefined) text.json = json;
  return value;
}
