import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/run-cli.js';

// `toolchain rerun` through the real CLI from bin/, on a project of its own with a SQLite store:
// which steps of a diamond run again (the tool writes a line per call), the new run's outputs,
// the origin `runs show` tells, inputs given with --input, and each refusal with its code.

const FIXTURE = join(REPO, 'test', 'fixtures', 'rerun');
const root = mkdtempSync(join(tmpdir(), 'toolchain-cli-rerun-'));
const chains = join(root, 'chains');
cpSync(join(FIXTURE, 'chains'), chains, { recursive: true });
const log = join(root, 'work.log');
const env = { WORK_LOG: log, TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}` };
const dirs = ['--chains', chains, '--plugins', join(FIXTURE, 'plugins')];
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cli = (...args: string[]) => runCli([...dirs, ...args], { cwd: root, env });
/** The steps that ran since the last call, in the order they ran. */
function ran(): string[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    // nothing ran yet
  }
  writeFileSync(log, '');
  return text.split('\n').filter((l) => l !== '');
}

let origin = 0;
async function originRun(): Promise<string> {
  const id = `origin-${++origin}`;
  const { code, stderr } = await cli('run', 'diamond', '--run-id', id);
  expect(code, stderr).toBe(0);
  expect(ran().sort()).toEqual(['a', 'b', 'c', 'd v1']);
  return id;
}

beforeEach(() => void ran());

describe('toolchain rerun', () => {
  it('from the middle of a diamond: a and c keep their outputs, b and d run with the new input; runs show tells both ways', async () => {
    const id = await originRun();
    const again = await cli('rerun', id, '--from', 'b', '--input', 'x=5', '--input', 'tag=v2', '--run-id', 'again-1');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`re-running run ${id} from step b`);
    expect(again.stderr).toContain('run again-1');
    expect(JSON.parse(again.stdout)).toEqual({ b: 15, c: 110, d: 125 });
    expect(ran()).toEqual(['b', 'd v2']);

    const shown = await cli('runs', 'show', 'again-1');
    expect(shown.stdout).toContain(`re-run of ${id} from step 'b'`);
    expect(shown.stdout).toMatch(/^a\s+succeeded \(kept\)\s+1/m);
    expect(shown.stdout).toMatch(/^c\s+succeeded \(kept\)\s+1/m);
    expect(shown.stdout).toMatch(/^b\s+succeeded\s+1/m);
    const json = JSON.parse((await cli('runs', 'show', 'again-1', '--json')).stdout) as { rerun_of: string; rerun_from: string; input: unknown; steps: Record<string, { kept_from?: string }> };
    expect(json).toMatchObject({ rerun_of: id, rerun_from: 'b', input: { x: 5, y: 10, tag: 'v2' } });
    expect(json.steps.a?.kept_from).toBe(id);
    expect(json.steps.d?.kept_from).toBeUndefined();
    const first = await cli('runs', 'show', id);
    expect(first.stdout).toContain('re-runs: again-1');
  });

  it('reads --input values as JSON when they are JSON, else as text; without --from every step runs again', async () => {
    const id = await originRun();
    const quoted = await cli('rerun', id, '--input', 'tag="5"', '--input', 'x=2');
    expect(quoted.code, quoted.stderr).toBe(0);
    expect(JSON.parse(quoted.stdout)).toEqual({ b: 12, c: 110, d: 122 });
    expect(ran().sort()).toEqual(['a', 'b', 'c', 'd 5']);
    const text = await cli('rerun', id, '--from', 'd', '--input', 'tag=plain words');
    expect(text.code, text.stderr).toBe(0);
    expect(ran()).toEqual(['d plain words']);
  });

  it('refuses what it cannot do, with its code and exit 2, running nothing', async () => {
    const id = await originRun();
    const read = await cli('rerun', id, '--from', 'b', '--input', 'y=11');
    expect(read.code).toBe(2);
    expect(read.stderr).toContain('RERUN_INPUT_READ');
    expect(read.stderr).toContain("input 'y' is read by step 'a'");
    const unknown = await cli('rerun', id, '--from', 'bb');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('STEP_NOT_FOUND');
    expect(unknown.stderr).toContain("did you mean 'b'?");
    const none = await cli('rerun', 'no-such-run');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('RUN_NOT_FOUND');
    const bad = await cli('rerun', id, '--input', 'novalue');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('USAGE');
    expect(ran()).toEqual([]);
  });

  it('is refused with CHAIN_CHANGED once the chain file changed, and runs the new definition with --allow-changed', async () => {
    const id = await originRun();
    const file = join(chains, 'diamond.yaml');
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before.replace('plus: 100', 'plus: 1000'));
    try {
      const refused = await cli('rerun', id, '--from', 'c');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('CHAIN_CHANGED');
      expect(refused.stderr).toContain('--allow-changed');
      expect(ran()).toEqual([]);
      const allowed = await cli('rerun', id, '--from', 'c', '--allow-changed');
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(JSON.parse(allowed.stdout)).toEqual({ b: 11, c: 1010, d: 1021 });
      expect(ran()).toEqual(['c', 'd v1']);
    } finally {
      writeFileSync(file, before);
    }
  });
});
