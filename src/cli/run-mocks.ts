import { ToolchainError } from '../common/errors.js';
import { printable } from '../common/printable.js';
import type { StepMocks } from '../executor/index.js';
import { checkMocks, stepMocks, type MockSpec, type MockTarget } from '../testing/index.js';
import type { CliIO } from './io.js';

/** `--mock STEP=JSON`: the step returns the JSON and never calls its tool. */
export function parseMocks(pairs: readonly string[]): ReadonlyMap<string, MockSpec> | undefined {
  const specs = new Map<string, MockSpec>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ToolchainError('USAGE', `--mock takes STEP=JSON, got '${pair}'`);
    const step = pair.slice(0, eq);
    if (specs.has(step)) throw new ToolchainError('USAGE', `--mock ${step} is given twice`);
    let output: unknown;
    try {
      output = JSON.parse(pair.slice(eq + 1)) as unknown;
    } catch (error) {
      throw new ToolchainError('INPUT_INVALID', `--mock ${step} is not valid JSON: ${(error as Error).message}`);
    }
    specs.set(step, { output });
  }
  return specs.size > 0 ? specs : undefined;
}

/**
 * The mocks of a run of `chain`, checked against it first: one naming no step is an error
 * (UNKNOWN_STEP, exit 2), an output that does not fit its tool's `returns` a warning on stderr.
 * A chain that is not loaded is left for the run to report.
 */
export function checkedMocks(io: CliIO, specs: ReadonlyMap<string, MockSpec>, chain: string, target: MockTarget): StepMocks | undefined {
  const plan = target.chain(chain);
  const problems = plan === undefined ? [] : checkMocks(plan, specs, target);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    const diagnostics = errors.map((p) => ({ code: p.code, severity: p.severity, message: p.message.replace(/^mock /, '--mock '), ...(p.suggestion !== undefined ? { suggestion: p.suggestion } : {}) }));
    throw new ToolchainError('UNKNOWN_STEP', diagnostics[0]!.message, diagnostics);
  }
  for (const p of problems) io.stderr.write(`${printable(`warning: ${p.code} ${p.message.replace(/^mock /, '--mock ')}`)}
`);
  return stepMocks(specs);
}
