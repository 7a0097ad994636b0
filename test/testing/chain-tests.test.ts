import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { testChain, parseTestFile } from '../../src/entry/testing.js';
import { runCli } from '../helpers/run-cli.js';

// Chain tests with mocked steps, from the command line and from code, and dry runs.

const TEXT = `chain: twice
cases:
  - name: the mocked step never calls its tool; the other one does
    input: { n: 2 }
    mocks:
      first: { output: { value: 40 } }
    expect:
      outputs: { result: 41 }
      steps: { first: { status: succeeded, attempts: 1 }, second: { status: succeeded } }
  - name: a sequence gives one result per attempt
    input: { n: 2 }
    mocks:
      first: { sequence: [ { error: FLAKY }, { error: FLAKY }, { output: { value: 1 } } ] }
    expect:
      outputs: { result: 2 }
      steps: { first: { attempts: 3 } }
  - name: a delay past the step's timeout is a TIMEOUT
    input: { n: 2 }
    mocks:
      first: { output: { value: 1 }, delay: 2s }
    expect:
      status: failed
      error: TIMEOUT
`;

const CHAIN = `name: twice
inputs: { n: integer }
steps:
  - name: first
    tool: add_one
    timeout: 300ms
    retry: { max_attempts: 3, backoff: { initial: 1ms, jitter: none } }
    input_map: { value: $.n }
  - name: second
    tool: add_one
    input_map: { value: $.first.value }
outputs: { result: $.second.value }
`;

describe('testChain', () => {
  it('runs each case with its mocks: mocked steps never call their tool, unmocked ones do', async () => {
    const engine = await createEngine({ cache: 'off' });
    const calls: number[] = [];
    try {
      engine.registerTool({
        name: 'add_one',
        parameters: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
        returns: { type: 'object', properties: { value: { type: 'integer' } } },
        handler: ({ value }) => {
          calls.push(Number(value));
          return { value: Number(value) + 1 };
        },
      });
      engine.addChain(CHAIN, 'twice.yaml');
      const { suite } = parseTestFile(TEXT, 'twice.test.yaml');
      const result = await testChain(engine, suite!);
      expect(result.cases.map((c) => [c.name, c.passed, c.mismatches])).toEqual([
        ['the mocked step never calls its tool; the other one does', true, []],
        ['a sequence gives one result per attempt', true, []],
        ["a delay past the step's timeout is a TIMEOUT", true, []],
      ]);
      // Only `second` ran the real tool: with 40 (case 1) and 1 (case 2); case 3 failed before it.
      expect(calls).toEqual([40, 1]);
      expect(result.cases[1]!.mockCalls).toEqual({ first: 3 });
      expect([result.passed, result.failed]).toEqual([3, 0]);
    } finally {
      await engine.close();
    }
  });

  it('refuses a mock of a step the chain (or its sub-chain) does not have with UNKNOWN_STEP at the mock, closest step named; runs nothing', async () => {
    const engine = await createEngine({ cache: 'off' });
    const calls: number[] = [];
    try {
      engine.registerTool({ name: 'add_one', parameters: { type: 'object', properties: { value: { type: 'integer' } } }, handler: ({ value }) => (calls.push(Number(value)), { value: Number(value) + 1 }) });
      engine.addChain(CHAIN, 'twice.yaml');
      engine.addChain('name: outer\ninputs: { n: integer }\nsteps:\n  - name: inner\n    chain: twice\n    input_map: { n: $.n }\n', 'outer.yaml');
      const text = (chain: string, mocks: string): string => `chain: ${chain}\ncases:\n  - name: c\n    input: { n: 1 }\n    mocks:\n${mocks}    expect: { status: succeeded }\n`;
      const thrown = (t: string): Promise<unknown> => testChain(engine, parseTestFile(t, 't.test.yaml').suite!).catch((e: unknown) => e);
      expect(await thrown(text('twice', '      frist: { output: { value: 1 } }\n'))).toMatchObject({
        code: 'UNKNOWN_STEP',
        diagnostics: [{ code: 'UNKNOWN_STEP', file: 't.test.yaml', line: 6, col: 7, suggestion: 'first', message: "case 'c': mock 'frist': chain 'twice' has no step 'frist' (did you mean 'first'?); its steps: first, second" }],
      });
      expect(await thrown(text('outer', '      inner›frist: { output: { value: 1 } }\n'))).toMatchObject({
        diagnostics: [{ code: 'UNKNOWN_STEP', message: expect.stringContaining("chain 'twice' (the sub-chain that step 'inner' runs) has no step 'frist' (did you mean 'first'?)") }],
      });
      expect(await thrown(text('twice', '      first›x: { output: 1 }\n'))).toMatchObject({
        diagnostics: [{ code: 'UNKNOWN_STEP', message: "case 'c': mock 'first›x': step 'first' of chain 'twice' calls tool 'add_one': it has no steps of its own to mock" }],
      });
      expect(calls).toEqual([]);
      // A sub-chain's step, named as it should be, is mocked.
      const fine = await testChain(engine, parseTestFile(text('outer', '      inner›first: { output: { value: 10 } }\n'), 't.test.yaml').suite!);
      expect([fine.passed, fine.warnings]).toEqual([1, []]);
      expect(calls).toEqual([10]);
    } finally {
      await engine.close();
    }
  });

  it('warns (RESULT_INVALID, at the mock) about a mocked output that does not fit the returns of the tool it stands in for', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      engine.registerTool({
        name: 'add_one',
        parameters: { type: 'object', properties: { value: { type: 'integer' } } },
        returns: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
        handler: ({ value }) => ({ value: Number(value) + 1 }),
      });
      engine.addChain(CHAIN, 'twice.yaml');
      const text = 'chain: twice\ncases:\n  - name: c\n    input: { n: 1 }\n    mocks:\n      first: { sequence: [ { error: FLAKY }, { output: { value: "x" } } ] }\n    expect: { status: failed }\n';
      const result = await testChain(engine, parseTestFile(text, 't.test.yaml').suite!);
      expect(result.warnings).toEqual([
        {
          code: 'RESULT_INVALID',
          severity: 'warning',
          file: 't.test.yaml',
          line: 6,
          col: 7,
          message: "case 'c': mock 'first' (sequence entry 2): the output does not fit what tool 'add_one' returns (its `returns` schema): 'value' must be integer, but got string \"x\"",
        },
      ]);
    } finally {
      await engine.close();
    }
  });

  it('reports an invalid test file with TEST_INVALID at its line and column', () => {
    const { suite, diagnostics } = parseTestFile('chain: x\ncases:\n  - name: a\n    mocks: { s: { outptu: 1 } }\n    expect: { status: maybe }\n', 't.test.yaml');
    expect(suite).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.line, d.col])).toEqual([
      ['TEST_INVALID', 4, 19],
      ['TEST_INVALID', 4, 17],
      ['TEST_INVALID', 5, 23],
    ]);
  });
});

describe('toolchain test', () => {
  it('runs every shipped chain test: ✓ per case and the summary line, exit 0', async () => {
    const { code, stdout } = await runCli(['test']);
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/✓ answers with the time and the population/);
    expect(stdout).toMatch(/^\d+ passed, 0 failed$/m);
  });

  it('shows a diff for a failing case and exits 1; --json says the same', async () => {
    const { code, stdout } = await runCli(['test', 'test/fixtures/chain-tests/failing.test.yaml']);
    expect(code).toBe(1);
    expect(stdout).toContain('✗ expects the wrong city');
    expect(stdout).toContain('outputs.city:\n        - expected "Kyoto"\n        + actual   "Osaka"');
    expect(stdout).toMatch(/^1 passed, 1 failed$/m);
    const json = await runCli(['test', '--json', 'test/fixtures/chain-tests/failing.test.yaml']);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as { passed: number; failed: number; files: { cases: { passed: boolean; mismatches: unknown[] }[] }[] };
    expect([parsed.passed, parsed.failed]).toEqual([1, 1]);
    expect(parsed.files[0]!.cases[0]!.mismatches).toEqual([{ path: 'outputs.city', expected: 'Kyoto', actual: 'Osaka' }]);
  });

  it('exits 2 for a mock of a step the chain does not have, at the mock with the closest step; runs no case of that file', async () => {
    const { code, stdout, stderr } = await runCli(['test', 'test/fixtures/chain-tests/unknown-mock.test.yaml']);
    expect(code).toBe(2);
    expect(stderr).toContain(
      "test/fixtures/chain-tests/unknown-mock.test.yaml:7:7 UNKNOWN_STEP case 'mocks a step the chain does not have': mock 'clokc': chain 'city_brief' has no step 'clokc' (did you mean 'clock'?); its steps: locate, clock, facts, brief, unsure",
    );
    expect(stdout).not.toContain('✓');
  });

  it("prints a warning for a mocked output that does not fit its tool's returns, and runs the case", async () => {
    const { code, stdout, stderr } = await runCli(['test', 'test/fixtures/chain-tests/ill-fitting-mock.test.yaml']);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^test\/fixtures\/chain-tests\/ill-fitting-mock\.test\.yaml:7:7 RESULT_INVALID case '.+': mock 'facts': the output does not fit what tool 'geo\/city_facts' returns \(its `returns` schema\): .*'population' must be integer, but got string "many"$/m);
    expect(stdout).toContain('✓ mocks a population the real tool would not return');
  });

  it('--help shows its examples and its own exit codes once each', async () => {
    const { code, stdout } = await runCli(['test', '--help']);
    expect(code).toBe(0);
    expect(stdout.split('Examples:').length - 1).toBe(1);
    expect(stdout.split('Exit codes:').length - 1).toBe(1);
    expect(stdout).toContain('Exit codes:\n  0    every case passed\n  1    a case failed\n  2    a test file is invalid');
    expect(stdout).not.toContain('a run failed');
    // Every other page still has the shared codes, once: a nested command's too.
    const nested = await runCli(['runs', 'show', '--help']);
    expect(nested.stdout.split('Exit codes:').length - 1).toBe(1);
    expect(nested.stdout).toContain('1    a run failed');
  });

  it('exits 2 for an invalid test file, naming the line', async () => {
    const { code, stderr } = await runCli(['test', 'test/fixtures/chain-tests/invalid.test.yaml']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^test\/fixtures\/chain-tests\/invalid\.test\.yaml:5:17 TEST_INVALID unknown key 'outptu'/m);
  });
});

describe('toolchain run --mock', () => {
  it('replaces the named steps with fixed results (a dry run)', async () => {
    const locate = { city: 'Atlantis', country: 'Sea', iso2: 'XX', timezone: 'UTC', confidence: 1, lat: 0, lng: 0, matched: 'Atlantis' };
    const { code, stdout } = await runCli(['run', 'city_brief', '--input', 'question=x', '--mock', `locate=${JSON.stringify(locate)}`, '--mock', 'facts={"population":7}']);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { text: string }).text).toMatch(/^Atlantis, Sea: \d\d:\d\d \(UTC\), population 7$/);
  });

  it('refuses a --mock of a step the chain does not have: UNKNOWN_STEP with the closest name, exit 2, no tool called', async () => {
    const { code, stdout, stderr } = await runCli(['run', 'city_brief', '--input', 'question=x', '--mock', 'locat={"city":"x"}']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe("UNKNOWN_STEP --mock 'locat': chain 'city_brief' has no step 'locat' (did you mean 'locate'?); its steps: locate, clock, facts, brief, unsure\n");
  });

  it("warns about a --mock output that does not fit its tool's returns, and runs", async () => {
    const locate = { city: 'Atlantis', country: 'Sea', iso2: 'XX', timezone: 'UTC', confidence: 1, lat: 0, lng: 0, matched: 'Atlantis' };
    const { code, stderr } = await runCli(['run', 'city_brief', '--input', 'question=x', '--mock', `locate=${JSON.stringify(locate)}`, '--mock', 'facts={"population":7}']);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^warning: RESULT_INVALID --mock 'facts': the output does not fit what tool 'geo\/city_facts' returns \(its `returns` schema\): .*missing required property 'city'/m);
  });

  it('refuses a --mock that is not STEP=JSON', async () => {
    const { code, stderr } = await runCli(['run', 'city_brief', '--input', 'question=x', '--mock', 'locate={city']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/INPUT_INVALID --mock locate is not valid JSON/);
  });
});
