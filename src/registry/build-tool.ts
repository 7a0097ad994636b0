import { isRecord, type JsonSchema } from '../common/json.js';
import { type Diagnostic, ToolchainError } from '../common/errors.js';
import type { ValidateFunction } from 'ajv';
import { TOP_LEVEL, type CompiledSchema, type SchemaCompiler, type SchemaUse } from './schema-compiler.js';
import { toProblems } from './argument-problems.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { planCopy, planFreshCopy } from './copy-args.js';
import { parseDuration } from '../expr/duration.js';
import { createDirect, createInvoke } from './invoke-tool.js';
import { restrictEnv } from './restrict-env.js';
import { createResultCache } from './result-cache.js';
import type { LoadMode, PrepareResult, Tool, ToolDefinition, ToolOwner } from './types.js';

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
