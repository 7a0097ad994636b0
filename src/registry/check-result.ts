import { ToolchainError } from '../common/errors.js';
import { TOP_LEVEL, type ValidateFunction } from './schema-compiler.js';
import { problemsError, toProblems } from './argument-problems.js';
import { flatJsonBytes, walkJson } from './check-json.js';
import { truncateResult } from './truncate-result.js';

// A handler's result on its way out: JSON (no undefined, cycles, BigInt, functions), the
// `returns` schema, then the size limit (or `truncate`). Serialising costs more than most tool
// calls' bookkeeping, so it happens only when the size bound from the walk could exceed the limit,
// when a Date-like value needs normalising, or when a cache needs the text.

export interface ResultRules {
  readonly tool: string;
  readonly limitBytes: number;
  readonly truncate: boolean;
  /** The `returns` validator, compiled on first use when schemas are lazy. */
  readonly returns?: () => ValidateFunction;
}

export interface CheckedResult {
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
export function checkResult(result: unknown, rules: ResultRules): CheckedResult {
  const text: JsonText = { json: undefined };
  const value = checkedValue(result, rules, text);
  return text.json === undefined ? { value } : { value, json: text.json };
}

/** Where checkedValue leaves the JSON text it had to make (a cache stores it). */
interface JsonText {
  json: string | undefined;
}

/**
 * checkResult's work, returning the value alone: the direct call of a quick tool (invoke-tool.ts)
 * needs nothing else, and a wrapper object per call was a tenth of what such a step allocated.
 */
export function checkedValue(result: unknown, rules: ResultRules, text?: JsonText): unknown {
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
