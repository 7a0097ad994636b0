import type { ChainPlan } from '../compiler/plan.js';
import type { JsonSchema } from '../common/json.js';
import { TOP_LEVEL, type ValidateFunction } from '../registry/schema-compiler.js';
import { toProblems } from '../registry/argument-problems.js';
import { planCopy, type CopyArgs } from '../registry/copy-args.js';
import type { ArgumentProblem } from '../registry/types.js';
import { checkJson } from '../registry/check-json.js';

// A run's input, validated against the chain's `inputs` schema with defaults filled and strings
// coerced (`--input n=5` arrives as '5' and becomes 5 where the schema says integer). Each engine
// has its own checker; it compiles a plan's validator once, with the engine's schema compiler, and
// keeps it in a WeakMap, so it goes when the plan goes. Ajv writes defaults and coerced values
// into what it checks, so it checks a copy.

interface InputChecker {
  readonly validate: ValidateFunction;
  readonly copy: CopyArgs;
}

export type InputResult =
  | { readonly ok: true; readonly input: Record<string, unknown> }
  | { readonly ok: false; readonly message: string; readonly problems: readonly ArgumentProblem[] };

export type CheckInput = (plan: ChainPlan, input: unknown) => InputResult;

/** A run-input checker whose validators `compile` makes (arguments use: defaults filled, types coerced). */
export function createInputChecker(compile: (schema: JsonSchema) => ValidateFunction): CheckInput {
  const checkers = new WeakMap<ChainPlan, InputChecker>();
  return (plan, input) => {
    let checker = checkers.get(plan);
    if (!checker) {
      checker = { validate: compile(plan.inputs.schema), copy: planCopy(plan.inputs.schema) };
      checkers.set(plan, checker);
    }
    try {
      return checkRunInput(plan, checker, input);
    } catch (error) {
      // A getter that throws, a Proxy that refuses: an input the engine cannot read is a bad input.
      const problem = { path: '', message: `the input could not be read (${(error as Error)?.message ?? String(error)})`, expected: 'object' };
      return { ok: false, message: `invalid input for chain '${plan.name}': ${problem.message}`, problems: [problem] };
    }
  };
}

function checkRunInput(plan: ChainPlan, checker: InputChecker, input: unknown): InputResult {
  const given = input === undefined || input === null ? {} : input;
  if (typeof given !== 'object' || Array.isArray(given)) {
    const problem = { path: '', message: 'the input must be an object of named values', expected: 'object' };
    return { ok: false, message: `invalid input for chain '${plan.name}': ${problem.message}`, problems: [problem] };
  }
  // What JSON cannot hold (a BigInt, a function, a cycle, NaN) never gets through: the input is
  // recorded and handed on as JSON, so such a value would only fail later, as some step's fault.
  const json = checkJson(given);
  if (!json.ok) {
    const problem = { path: json.path, message: `the input${json.path ? ` at ${json.path}` : ''} is not JSON: ${json.reason.replace('(return ', '(pass ')}`, expected: 'JSON' };
    return { ok: false, message: `invalid input for chain '${plan.name}': ${problem.message}`, problems: [problem] };
  }
  const { validate, copy } = checker;
  const copied = copy(given as Record<string, unknown>);
  if (validate(copied, TOP_LEVEL)) return { ok: true, input: copied };
  const problems = toProblems(validate.errors, 'the input');
  const list = problems.map((p) => p.message).join('; ');
  return { ok: false, message: `invalid input for chain '${plan.name}': ${list}`, problems };
}
