import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// Hostile input, round two, smaller breaks: a run that can never start says why at once.
//  - A BigInt (or anything else JSON cannot hold) in an input passed INPUT_INVALID and failed
//    later as RESULT_INVALID, as if a step were at fault.
//  - `run broken`, where broken.yaml does not parse, answered CHAIN_NOT_FOUND without a word about
//    the file.

describe('an input JSON cannot hold is INPUT_INVALID', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'id', handler: (args) => args });
    engine.addChain('name: deep\ninputs: { o: object }\nsteps:\n  - name: s\n    tool: id\n    input_map: { o: $.o }\noutputs: { o: $.s.o }\n');
  });
  afterAll(() => engine.close());

  it('a BigInt, nested or at the top, with and without a run id', async () => {
    for (const [input, runId] of [[{ o: { n: 10n } }, undefined], [{ o: { list: [1, 2n] } }, 'hostile-bigint'], [{ o: {}, extra: 3n }, undefined]] as const) {
      const result = await engine.run('deep', input, runId ? { runId } : {});
      expect(result).toMatchObject({ status: 'failed', error: { code: 'INPUT_INVALID' } });
      expect(result.error?.message).toContain('BigInt');
      expect(result.steps).toEqual({});
    }
  });

  it('a function, NaN and a cycle too; plain JSON still runs', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const o of [{ f: () => 1 }, { n: Number.NaN }, cyclic]) {
      expect((await engine.run('deep', { o })).error?.code).toBe('INPUT_INVALID');
    }
    expect(await engine.run('deep', { o: { n: 1, s: 'x', l: [null, true] } })).toMatchObject({ status: 'succeeded', outputs: { o: { n: 1, s: 'x', l: [null, true] } } });
  });
});

describe('run on a chain whose file does not parse', () => {
  let project: string;
  beforeAll(async () => {
    project = await tempDir('toolchain-broken-');
    await writeFiles(project, { 'chains/broken.yaml': 'name: broken\nsteps: [\n  - name: s\n', 'chains/other.yaml': 'name: other\nsteps: [}\n', 'plugins/.keep': '' });
  });
  afterAll(() => removeDir(project));

  it('names the file, the place and the parse error, with the parse error as the code', async () => {
    const out = await runCli(['run', 'broken'], { cwd: project });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('YAML_SYNTAX');
    expect(out.stderr).not.toContain('CHAIN_NOT_FOUND');
    expect(out.stderr).toMatch(/chain 'broken' cannot be read: .*broken\.yaml:\d+:\d+/);
  });

  it('graph says the same: the file and its parse error', async () => {
    const out = await runCli(['graph', 'broken'], { cwd: project });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/broken\.yaml:\d+:\d+ YAML_SYNTAX /);
  });

  it('a chain that is nowhere is CHAIN_NOT_FOUND, saying which files could not be read', async () => {
    const out = await runCli(['run', 'missing'], { cwd: project });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('CHAIN_NOT_FOUND');
    expect(out.stderr).toContain('2 chain files could not be read (broken.yaml, other.yaml');
  });
});
