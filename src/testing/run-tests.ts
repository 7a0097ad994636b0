import { readFile } from 'node:fs/promises';
import { ToolchainError, type Diagnostic } from '../common/errors.js';
import type { RunOptions } from '../executor/index.js';
import type { RunResult } from '../run-model/result.js';
import type { ApproveCallback } from '../registry/types.js';
import { partialMatch, type Mismatch } from './match.js';
import { checkMocks, type MockTarget } from './check-mocks.js';
import { stepMocks, type MockCalls } from './mock-callee.js';
import { parseTestFile, type TestCase, type TestSuite } from './test-file.js';

// Runs the cases of a chain test file against an engine: each case is a real run of
// the chain, with the mocked steps' callees replaced, then compared with what the case expects.

/**
 * What testChain needs of an engine: `engine.run` (an Engine is one). With `chain` (and `tools`)
 * too, the cases' mocks are checked against the chain before any case runs.
 */
export interface TestTarget extends Partial<MockTarget> {
  run(chain: string, input?: unknown, options?: RunOptions): Promise<RunResult>;
}

export interface CaseResult {
  readonly name: string;
  readonly passed: boolean;
  readonly mismatches: readonly Mismatch[];
  readonly result: RunResult;
  /** How often each mocked step was called. */
  readonly mockCalls: Readonly<Record<string, number>>;
  readonly duration_ms: number;
}

export interface SuiteResult {
  readonly file: string;
  readonly chain: string;
  readonly cases: readonly CaseResult[];
  readonly passed: number;
  readonly failed: number;
  /** Problems of the file that let it run: a mocked output that does not fit its tool's `returns`. */
  readonly warnings: readonly Diagnostic[];
}

export interface TestChainOptions {
  /** Approves calls of dangerous tools that are not mocked (default: refuse them). */
  readonly approve?: ApproveCallback;
}

/** Reads and checks a test file; a bad one is a ToolchainError (TEST_INVALID) with its diagnostics. */
export async function loadTestFile(file: string): Promise<TestSuite> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ToolchainError('TEST_INVALID', `cannot read test file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return suiteOf(text, file);
}

export function suiteOf(text: string, file: string): TestSuite {
  const { suite, diagnostics } = parseTestFile(text, file);
  if (suite) return suite;
  const first: Diagnostic | undefined = diagnostics.find((d) => d.severity === 'error');
  throw new ToolchainError(first?.code ?? 'TEST_INVALID', first?.message ?? `${file} is not a valid test file`, diagnostics);
}

/**
 * Runs every case of a test file (a path, or a suite already read) against `engine`, e.g. from
 * vitest: `expect((await testChain(engine, 'chains/city_brief.test.yaml')).failed).toBe(0)`.
 */
export async function testChain(engine: TestTarget, test: string | TestSuite, options: TestChainOptions = {}): Promise<SuiteResult> {
  const suite = typeof test === 'string' ? await loadTestFile(test) : test;
  const warnings = checkSuiteMocks(suite, engine);
  const cases: CaseResult[] = [];
  for (const c of suite.cases) cases.push(await runCase(engine, suite.chain, c, options));
  const passed = cases.filter((c) => c.passed).length;
  return { file: suite.file, chain: suite.chain, cases, passed, failed: cases.length - passed, warnings };
}

/**
 * Every case's mocks against the chain, each problem at its mock's key: a mock of no step throws
 * (UNKNOWN_STEP: the file is wrong, nothing runs); the warnings are returned.
 */
function checkSuiteMocks(suite: TestSuite, engine: TestTarget): Diagnostic[] {
  const chain = engine.chain?.bind(engine);
  const plan = chain?.(suite.chain);
  if (chain === undefined || plan === undefined) return [];
  const target: MockTarget = { chain, ...(engine.tools ? { tools: engine.tools.bind(engine) } : {}) };
  const found = suite.cases.flatMap((c) =>
    checkMocks(plan, c.mocks, target).map((p): Diagnostic => ({
      code: p.code,
      severity: p.severity,
      message: `case '${c.name}': ${p.message}`,
      file: suite.file,
      ...(c.mockKeys.get(p.key) ?? {}),
      ...(p.suggestion !== undefined ? { suggestion: p.suggestion } : {}),
    })),
  );
  const errors = found.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new ToolchainError('UNKNOWN_STEP', errors[0]!.message, found);
  return found;
}

async function runCase(engine: TestTarget, chain: string, c: TestCase, options: TestChainOptions): Promise<CaseResult> {
  const calls: MockCalls = new Map();
  const mocks = stepMocks(c.mocks, calls);
  const started = Date.now();
  const result = await engine.run(chain, c.input, { ...(mocks ? { mocks } : {}), ...(options.approve ? { approve: options.approve } : {}) });
  const mismatches: Mismatch[] = [];
  const e = c.expect;
  if (e.status !== undefined) partialMatch(e.status, result.status, 'status', mismatches);
  else if (e.error === undefined) partialMatch('succeeded', result.status, 'status', mismatches);
  if (e.error !== undefined) partialMatch(e.error, result.error?.code, 'error', mismatches);
  if (e.outputs !== undefined) partialMatch(e.outputs, result.outputs, 'outputs', mismatches);
  for (const [step, want] of Object.entries(e.steps ?? {})) {
    const got = result.steps[step];
    partialMatch(want, got ? { status: got.status, attempts: got.attempts, ...(got.error ? { error: got.error.code } : {}) } : undefined, `steps.${step}`, mismatches);
  }
  return { name: c.name, passed: mismatches.length === 0, mismatches, result, mockCalls: Object.fromEntries(calls), duration_ms: Date.now() - started };
}
