import type { ChainPlan } from '../compiler/plan.js';
import { createSchemaCompiler, type SchemaCompiler, type ValidateFunction } from '../registry/schema-compiler.js';
import { toProblems } from '../registry/argument-problems.js';
import { planCopy, type CopyArgs } from '../registry/copy-args.js';
import type { ArgumentProblem } from '../registry/types.js';

// A run's input, validated against the chain's `inputs` schema with defaults filled and strings
// coerced (`--input n=5` arrives as '5' and becomes 5 where the schema says integer). The
// validator is compiled once per plan and kept in a WeakMap, so it goes when the plan goes.
// Ajv writes defaults and coerced values into what it checks, so it checks a copy.

interface InputChecker {
  readonly validate: ValidateFunction;
  readonly copy: CopyArgs;
}

const checkers = new WeakMap<ChainPlan, InputChecker>();

export type InputResult =
  | { readonly ok: true; readonly input: Record<string, unknown> }
  | { readonly ok: false; readonly message: string; readonly problems: readonly ArgumentProblem[] };

function checkerFor(plan: ChainPlan, schemas: SchemaCompiler | undefined): InputChecker {
  let checker = checkers.get(plan);
  if (!checker) {
    // Without the engine's compiler (a caller that has none), a compiler of its own: slower, shares nothing.
    const validate = (schemas ?? createSchemaCompiler()).compile(plan.inputs.schema, 'arguments').validate;
    checker = { validate, copy: planCopy(plan.inputs.schema) };
    checkers.set(plan, checker);
  }
  return checker;
}

/** `schemas`: the engine's compiler (its registry's), so the validator comes from its caches. */
export function checkRunInput(plan: ChainPlan, input: unknown, schemas?: SchemaCompiler): InputResult {
  const given = input === undefined || input === null ? {} : input;
  if (typeof given !== 'object' || Array.isArray(given)) {
    const problem = { path: '', message: 'the input must be an object of named values', expected: 'object' };
    return { ok: false, message: `invalid input for chain '${plan.name}': ${problem.message}`, problems: [problem] };
  }
  const { validate, copy } = checkerFor(plan, schemas);
  const copied = copy(given as Record<string, unknown>);
  if (validate(copied)) return { ok: true, input: copied };
  const problems = toProblems(validate.errors, 'the input');
  const list = problems.map((p) => p.message).join('; ');
  return { ok: false, message: `invalid input for chain '${plan.name}': ${list}`, problems };
}
