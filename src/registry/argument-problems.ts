import { didYouMean, type ErrorCode, ToolchainError } from '../common/errors.js';
import type { ErrorObject } from './schema-compiler.js';
import { escapeToken, pointerTokens } from '../common/json-pointer.js';
import type { ArgumentProblem } from './types.js';

// Ajv's errors turned into sentences a language model can act on: which field, what was
// expected, what arrived, the allowed values, and the closest allowed name for a misspelling.

/** `/options/unit` → `options.unit`; `/items/2/name` → `items[2].name`. */
export function fieldLabel(pointer: string): string {
  let label = '';
  for (const segment of pointerTokens(pointer)) {
    label += /^\d+$/.test(segment) ? `[${segment}]` : label === '' ? segment : `.${segment}`;
  }
  return label;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return `string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number') return `${Number.isInteger(value) ? 'integer' : 'number'} ${value}`;
  return `${typeof value} ${String(value)}`;
}

function typeOf(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.join(' or ');
  const values = (schema as { enum?: unknown }).enum;
  if (Array.isArray(values)) return `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return undefined;
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  const props = typeof schema === 'object' && schema !== null ? (schema as { properties?: unknown }).properties : undefined;
  return typeof props === 'object' && props !== null ? (props as Record<string, unknown>) : {};
}

function problemOf(error: ErrorObject, subject: string): ArgumentProblem | undefined {
  const path = error.instancePath;
  const field = path === '' ? subject : `'${fieldLabel(path)}'`;
  const got = `, but got ${describe(error.data)}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const name = String(params.missingProperty);
      const expected = typeOf(propertiesOf(error.parentSchema)[name]);
      const where = path === '' ? '' : ` in ${field}`;
      return {
        path: `${path}/${escapeToken(name)}`,
        message: `missing required property '${name}'${expected ? ` (${expected})` : ''}${where}`,
        ...(expected ? { expected } : {}),
      };
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const allowed = Object.keys(propertiesOf(error.parentSchema));
      const suggestion = didYouMean(name, allowed);
      const where = path === '' ? '' : ` in ${field}`;
      const hint = suggestion ? ` (did you mean '${suggestion}'?)` : '';
      const list = allowed.length > 0 ? `; allowed properties: ${allowed.join(', ')}` : '; no other properties are allowed';
      return {
        path: `${path}/${escapeToken(name)}`,
        message: `unknown property '${name}'${where}${hint}${list}`,
        expected: allowed.length > 0 ? `one of the properties ${allowed.join(', ')}` : 'no such property',
        allowed,
      };
    }
    case 'type': {
      const expected = Array.isArray(params.type) ? params.type.join(' or ') : String(params.type);
      return { path, message: `${field} must be ${expected}${got}`, expected };
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]) ?? [];
      const expected = `one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
      const strings = allowed.filter((v): v is string => typeof v === 'string');
      const suggestion = typeof error.data === 'string' ? didYouMean(error.data, strings) : undefined;
      const hint = suggestion ? ` (did you mean ${JSON.stringify(suggestion)}?)` : '';
      return { path, message: `${field} must be ${expected}${got}${hint}`, expected, allowed };
    }
    case 'const': {
      const expected = JSON.stringify(params.allowedValue);
      return { path, message: `${field} must be ${expected}${got}`, expected, allowed: [params.allowedValue] };
    }
    case 'format': {
      const expected = `a string in ${String(params.format)} format`;
      return { path, message: `${field} must be ${expected}${got}`, expected };
    }
    case 'pattern':
      return { path, message: `${field} must match the pattern ${String(params.pattern)}${got}`, expected: `a string matching ${String(params.pattern)}` };
    case 'if':
      // Always accompanied by the error of the failing `then`/`else`, which says more.
      return undefined;
    default:
      return { path, message: `${field} ${error.message ?? 'is invalid'}${got}` };
  }
}

/** Every problem once, in Ajv's order. `subject` names the root ('the arguments', 'the result'). */
export function toProblems(errors: readonly ErrorObject[] | null | undefined, subject = 'the arguments'): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    const problem = problemOf(error, subject);
    if (!problem) continue;
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

/** One line listing every problem (errors are one line each), for people and for a model to read back. */
export function formatProblems(tool: string, problems: readonly ArgumentProblem[], what = 'arguments'): string {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return `Invalid ${what} for tool '${tool}' (${count}): ${problems.map((p) => p.message).join('; ')}`;
}

/** The ToolchainError for failed arguments (VALIDATION_FAILED) or results (RESULT_INVALID). */
export function problemsError(
  code: Extract<ErrorCode, 'VALIDATION_FAILED' | 'RESULT_INVALID'>,
  tool: string,
  problems: readonly ArgumentProblem[],
): ToolchainError {
  const what = code === 'VALIDATION_FAILED' ? 'arguments' : 'result';
  return new ToolchainError(
    code,
    formatProblems(tool, problems, what),
    problems.map((p) => ({ code, severity: 'error', message: p.message, pointer: p.path })),
  );
}
