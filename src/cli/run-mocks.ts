import { ToolchainError } from '../common/errors.js';
import type { StepMocks } from '../executor/index.js';
import { stepMocks, type MockSpec } from '../testing/index.js';

/** `--mock STEP=JSON` (SPEC §10): the step returns the JSON and never calls its tool. */
export function parseMocks(pairs: readonly string[]): StepMocks | undefined {
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
  return stepMocks(specs);
}
