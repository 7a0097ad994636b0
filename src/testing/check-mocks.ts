import { didYouMean, suggestionSuffix, type Severity } from '../common/errors.js';
import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { toProblems } from '../registry/argument-problems.js';
import { createSchemaCompiler, type SchemaCompiler } from '../registry/schema-compiler.js';
import type { ToolSet } from '../registry/types.js';
import type { MockResult, MockSpec } from './mock-callee.js';

// Mocks checked against the chain they replace steps of, before anything runs: a mock whose key
// names no step (a typo: `frnch` for `french`) would be ignored and the real tool called, so it
// is an error (UNKNOWN_STEP, with the closest step name); a mocked output that does not fit the
// `returns` schema of the tool it stands in for is a warning (RESULT_INVALID) — the test would
// pass on a value the real tool never gives.

/** What the check reads of an engine: chains (for sub-chain steps) and tools (for `returns`). */
export interface MockTarget {
  chain(name: string): ChainPlan | undefined;
  tools?(): ToolSet;
}

export interface MockProblem {
  /** The mock's key as given (`locate`, `first›locate`). */
  readonly key: string;
  readonly code: 'UNKNOWN_STEP' | 'RESULT_INVALID';
  readonly severity: Severity;
  readonly message: string;
  readonly suggestion?: string;
}

/** Every step a run of `plan` may have: its steps, its on_failure and finally steps, its compensations (`STEP~compensate`). */
function mockable(plan: ChainPlan): readonly PlanStep[] {
  const h = plan.handlers;
  if (h === undefined) return plan.steps;
  return [...plan.steps, ...(h.onFailure?.steps ?? []), ...h.compensations.flatMap((c) => c?.steps ?? []), ...(h.finally?.steps ?? [])];
}

/** `a›b›c` (or `a>b>c`) as its step names. */
function stepPath(key: string): string[] {
  return key.split(/[›>]/).map((part) => part.trim());
}

/** Every problem of the mocks of one run of `plan`, in the order the mocks are given. */
export function checkMocks(plan: ChainPlan, mocks: ReadonlyMap<string, MockSpec>, target: MockTarget): MockProblem[] {
  const problems: MockProblem[] = [];
  let compiler: SchemaCompiler | undefined;
  for (const [key, spec] of mocks) {
    let chain = plan;
    const path = stepPath(key);
    for (const [depth, name] of path.entries()) {
      const steps = mockable(chain);
      const step = steps.find((s) => s.name === name);
      if (step === undefined) {
        const suggestion = didYouMean(name, steps.map((s) => s.name));
        const inner = depth === 0 ? '' : ` (the sub-chain that step '${path.slice(0, depth).join('›')}' runs)`;
        problems.push({
          key,
          code: 'UNKNOWN_STEP',
          severity: 'error',
          message: `mock '${key}': chain '${chain.name}'${inner} has no step '${name}'${suggestionSuffix(suggestion)}; its steps: ${steps.map((s) => s.name).join(', ')}`,
          ...(suggestion !== undefined ? { suggestion } : {}),
        });
        break;
      }
      if (depth === path.length - 1) {
        if (step.target.kind !== 'tool') break;
        const tool = target.tools?.().get(step.target.tool);
        if (tool?.returns === undefined) break;
        compiler ??= createSchemaCompiler();
        const validate = compiler.compile(tool.returns, 'results').validate;
        const results: readonly MockResult[] = 'sequence' in spec ? spec.sequence : [spec];
        results.forEach((result, i) => {
          if (!('output' in result) || validate(result.output)) return;
          const which = 'sequence' in spec ? ` (sequence entry ${i + 1})` : '';
          const found = toProblems(validate.errors, 'the output')
            .map((p) => p.message)
            .join('; ');
          problems.push({ key, code: 'RESULT_INVALID', severity: 'warning', message: `mock '${key}'${which}: the output does not fit what tool '${tool.qualifiedName}' returns (its \`returns\` schema): ${found}` });
        });
        break;
      }
      const sub = step.target.kind === 'chain' ? target.chain(step.target.chain) : undefined;
      if (sub === undefined) {
        const runs = step.target.kind === 'tool' ? `calls tool '${step.target.tool}'` : step.target.kind === 'agent' ? 'is an agent step' : step.target.kind === 'wait' ? 'is a waiting step' : `runs chain '${step.target.chain}', which is not loaded`;
        problems.push({ key, code: 'UNKNOWN_STEP', severity: 'error', message: `mock '${key}': step '${name}' of chain '${chain.name}' ${runs}: it has no steps of its own to mock` });
        break;
      }
      chain = sub;
    }
  }
  return problems;
}
