// Chain tests and dry runs: test files, mocked steps, partial matching.
export { diffLines, partialMatch, type Mismatch } from './match.js';
export { mockCallee, stepMocks, type MockCalls, type MockResult, type MockSpec } from './mock-callee.js';
export { loadTestFile, suiteOf, testChain, type CaseResult, type SuiteResult, type TestChainOptions, type TestTarget } from './run-tests.js';
export { parseTestFile, type StepExpectation, type TestCase, type TestSuite } from './test-file.js';
export { checkMocks, type MockProblem, type MockTarget } from './check-mocks.js';
