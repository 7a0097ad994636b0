import { didYouMean, suggestionSuffix, type Diagnostic } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import { parseDuration } from '../expr/duration.js';
import { DiagnosticSink } from '../loader/diagnostic-sink.js';
import { parseYaml, type SourcePosition } from '../loader/index.js';
import { escapeToken } from '../common/json-pointer.js';
import type { MockResult, MockSpec } from './mock-callee.js';

// A chain test file (`chains/NAME.test.yaml`), read with the same safe YAML loader as
// chains, and checked here by hand: every problem is TEST_INVALID at its line and column.

export interface StepExpectation {
  readonly status?: string;
  readonly attempts?: number;
  /** The error code the step ends with. */
  readonly error?: string;
}

export interface TestCase {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly mocks: ReadonlyMap<string, MockSpec>;
  /** Where each mock's key is in the file. */
  readonly mockKeys: ReadonlyMap<string, SourcePosition>;
  readonly expect: {
    readonly status?: 'succeeded' | 'failed' | 'compensation_failed' | 'cancelled';
    /** Partial: only the keys listed are compared (recursively for objects). */
    readonly outputs?: unknown;
    /** The run's error code, for a case that expects a failure. */
    readonly error?: string;
    readonly steps?: Readonly<Record<string, StepExpectation>>;
  };
  readonly line: number;
}

export interface TestSuite {
  readonly file: string;
  readonly chain: string;
  readonly cases: readonly TestCase[];
}

const SUITE_KEYS = ['chain', 'cases'];
const CASE_KEYS = ['name', 'input', 'mocks', 'expect'];
const MOCK_KEYS = ['output', 'error', 'message', 'delay', 'sequence'];
const EXPECT_KEYS = ['status', 'outputs', 'error', 'steps'];
const STEP_KEYS = ['status', 'attempts', 'error'];
/** How a run can end. */
const STATUSES = ['succeeded', 'failed', 'compensation_failed', 'cancelled'];

export function parseTestFile(text: string, file: string): { suite?: TestSuite; diagnostics: readonly Diagnostic[] } {
  const { document, diagnostics } = parseYaml(text, file);
  if (!document) return { diagnostics };
  const sink = new DiagnosticSink(file, document.sourceMap);
  const bad = (pointer: string, message: string, atKey = false): void => sink.error('TEST_INVALID', pointer, message, { atKey });
  const keys = (value: Record<string, unknown>, allowed: string[], pointer: string, what: string): void => {
    for (const k of Object.keys(value)) {
      if (allowed.includes(k)) continue;
      bad(`${pointer}/${k}`, `unknown key '${k}' in ${what}${suggestionSuffix(didYouMean(k, allowed))}; allowed: ${allowed.join(', ')}`, true);
    }
  };
  const doc = document.value;
  if (!isRecord(doc)) {
    bad('', 'a test file is a mapping with `chain` and `cases`');
    return { diagnostics: [...diagnostics, ...sink.diagnostics] };
  }
  keys(doc, SUITE_KEYS, '', 'a test file');
  if (typeof doc.chain !== 'string' || doc.chain === '') bad('/chain', '`chain` must name the chain under test');
  if (!Array.isArray(doc.cases) || doc.cases.length === 0) bad('/cases', '`cases` must be a non-empty list of test cases');
  const cases: TestCase[] = [];
  (Array.isArray(doc.cases) ? doc.cases : []).forEach((c: unknown, i) => {
    const at = `/cases/${i}`;
    if (!isRecord(c)) return bad(at, 'a case is a mapping with name, input, mocks and expect');
    keys(c, CASE_KEYS, at, 'a case');
    if (typeof c.name !== 'string' || c.name === '') bad(`${at}/name`, 'a case needs a `name`');
    if (c.input !== undefined && !isRecord(c.input)) bad(`${at}/input`, '`input` must be a mapping of input names to values');
    const mocks = new Map<string, MockSpec>();
    const mockKeys = new Map<string, SourcePosition>();
    if (c.mocks !== undefined && !isRecord(c.mocks)) bad(`${at}/mocks`, '`mocks` must map step names to mocks');
    for (const [step, m] of Object.entries(isRecord(c.mocks) ? c.mocks : {})) {
      const pointer = `${at}/mocks/${escapeToken(step)}`;
      const spec = mockSpec(m, pointer, bad, keys);
      if (spec) mocks.set(step, spec);
      mockKeys.set(step, document.sourceMap.keyAt(pointer));
    }
    const e = c.expect;
    if (!isRecord(e)) return bad(`${at}/expect`, 'a case needs `expect` (status, outputs, error, steps)');
    keys(e, EXPECT_KEYS, `${at}/expect`, '`expect`');
    if (e.status !== undefined && !(typeof e.status === 'string' && STATUSES.includes(e.status))) {
      bad(`${at}/expect/status`, `\`status\` is one of ${STATUSES.join(', ')}${typeof e.status === 'string' ? suggestionSuffix(didYouMean(e.status, STATUSES)) : ''}`);
    }
    if (e.error !== undefined && typeof e.error !== 'string') bad(`${at}/expect/error`, '`error` is an error code');
    if (e.steps !== undefined && !isRecord(e.steps)) bad(`${at}/expect/steps`, '`steps` maps step names to { status, attempts, error }');
    for (const [step, s] of Object.entries(isRecord(e.steps) ? e.steps : {})) {
      if (!isRecord(s)) bad(`${at}/expect/steps/${step}`, 'a step expectation is a mapping of status, attempts, error');
      else keys(s, STEP_KEYS, `${at}/expect/steps/${step}`, 'a step expectation');
    }
    cases.push({
      name: typeof c.name === 'string' ? c.name : `case ${i + 1}`,
      input: isRecord(c.input) ? c.input : {},
      mocks,
      mockKeys,
      expect: e as TestCase['expect'],
      line: document.sourceMap.valueAt(at).line,
    });
  });
  const all = [...diagnostics, ...sink.diagnostics];
  if (all.some((d) => d.severity === 'error')) return { diagnostics: all };
  return { suite: { file, chain: doc.chain as string, cases }, diagnostics: all };
}

type Bad = (pointer: string, message: string, atKey?: boolean) => void;
type Keys = (value: Record<string, unknown>, allowed: string[], pointer: string, what: string) => void;

function mockSpec(m: unknown, at: string, bad: Bad, keys: Keys): MockSpec | undefined {
  if (!isRecord(m)) return bad(at, 'a mock is { output }, { error }, or { sequence: [...] }'), undefined;
  if (m.sequence !== undefined) {
    keys(m, ['sequence'], at, 'a mock with a sequence');
    if (!Array.isArray(m.sequence) || m.sequence.length === 0) return bad(`${at}/sequence`, '`sequence` is a non-empty list, one result per attempt'), undefined;
    const results = m.sequence.map((r: unknown, k) => mockResult(r, `${at}/sequence/${k}`, bad, keys));
    return results.every((r): r is MockResult => r !== undefined) ? { sequence: results } : undefined;
  }
  return mockResult(m, at, bad, keys);
}

function mockResult(r: unknown, at: string, bad: Bad, keys: Keys): MockResult | undefined {
  if (!isRecord(r)) return bad(at, 'a result is { output } or { error }'), undefined;
  keys(r, MOCK_KEYS.filter((k) => k !== 'sequence'), at, 'a mocked result');
  // `error: CODE` or `error: { code, message }` (the docs show the first; the second reads well too).
  const error = isRecord(r.error) ? r.error.code : r.error;
  const message = isRecord(r.error) ? r.error.message : r.message;
  if (error !== undefined && (typeof error !== 'string' || error === '')) return bad(`${at}/error`, '`error` is an error code such as TIMEOUT'), undefined;
  if (error === undefined && !('output' in r)) return bad(at, 'a mocked result needs `output` or `error`'), undefined;
  let delayMs: number | undefined;
  if (r.delay !== undefined) {
    delayMs = parseDuration(r.delay);
    if (delayMs === undefined) return bad(`${at}/delay`, '`delay` is a duration such as 250ms or 2s'), undefined;
  }
  return {
    ...('output' in r ? { output: r.output } : {}),
    ...(typeof error === 'string' ? { error } : {}),
    ...(typeof message === 'string' ? { message } : {}),
    ...(delayMs !== undefined ? { delayMs } : {}),
  };
}
