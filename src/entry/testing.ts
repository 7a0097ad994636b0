// `toolchain/testing`: chain tests from code — the runner behind `toolchain test`, its test
// files, and mocks that stand in for steps' tools.

export { testChain, loadTestFile, parseTestFile, stepMocks, mockCallee } from '../testing/index.js';
export type { CaseResult, SuiteResult, TestChainOptions, TestTarget, TestSuite, TestCase, MockSpec, MockResult, Mismatch } from '../testing/index.js';
