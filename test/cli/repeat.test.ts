import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { REPO, runCli } from '../helpers/run-cli.js';

// `repeat:` through the real CLI from bin/: what `validate` says of each key that is wrong, and a
// polling run killed with SIGKILL between two rounds, then resumed with `toolchain resume`: the
// rounds recorded before the kill are not run again (the tool writes a line per call).

const BIN = join(REPO, 'bin', 'toolchain.js');
const STUB = join(REPO, 'test', 'fixtures', 'cli-plugins');
const FIXTURE = join(REPO, 'test', 'fixtures', 'repeat');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-cli-repeat-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('toolchain validate: repeat', () => {
  const cases: [what: string, step: string, code: string, line: number, col: number][] = [
    ['an until that does not parse', 'repeat: { until: "$.this.state ==", every: 1m, max_attempts: 3 }', 'BAD_EXPRESSION', 5, 22],
    ['an every that is no duration', 'repeat: { until: "$.this.ok", every: soon, max_attempts: 3 }', 'BAD_DURATION', 5, 42],
    ['no max_attempts', 'repeat: { until: "$.this.ok", every: 1m }', 'MISSING_KEY', 5, 13],
    ['max_attempts below 1', 'repeat: { until: "$.this.ok", every: 1m, max_attempts: 0 }', 'BAD_VALUE', 5, 60],
    ['an unknown key', 'repeat: { until: "$.this.ok", every: 1m, max_attempts: 3, evry: 2m }', 'UNKNOWN_KEY', 5, 63],
    ['until reading a step that is not there', 'repeat: { until: "$.nothing.ok", every: 1m, max_attempts: 3 }', 'UNKNOWN_REFERENCE', 5, 22],
  ];
  for (const [what, step, code, line, col] of cases) {
    it(`${what}: ${code} at ${line}:${col}`, async () => {
      const dir = mkdtempSync(join(root, 'validate-'));
      const file = join(dir, 'poll.yaml');
      writeFileSync(file, `name: poll\nsteps:\n  - name: probe\n    tool: echo\n    ${step}\n`);
      const { code: exit, stdout } = await runCli(['validate', '--chains', dir, '--plugins', STUB, file]);
      expect(exit, stdout).toBe(2);
      expect(stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`poll\\.yaml:${line}:${col} ${code} \\S`))]);
    });
  }

  it('a repeat on a waiting step, and one with for_each: BAD_VALUE at the repeat', async () => {
    const dir = mkdtempSync(join(root, 'validate-'));
    const file = join(dir, 'poll.yaml');
    writeFileSync(
      file,
      `name: poll
inputs: { jobs: array }
steps:
  - name: nap
    sleep: 1m
    repeat: { until: "$.this.ok", every: 1m, max_attempts: 3 }
  - name: each
    tool: echo
    for_each: $.jobs
    repeat: { until: "$.this.ok", every: 1m, max_attempts: 3 }
`,
    );
    const { code, stdout } = await runCli(['validate', '--chains', dir, '--plugins', STUB, file]);
    expect(code).toBe(2);
    expect(stdout.trim().split('\n')).toEqual([expect.stringMatching(/poll\.yaml:6:13 BAD_VALUE step 'nap' waits/), expect.stringMatching(/poll\.yaml:10:13 BAD_VALUE step 'each' has for_each/)]);
  });

  it('a good repeat validates, and its until may read other steps besides $.this', async () => {
    const dir = mkdtempSync(join(root, 'validate-'));
    const file = join(dir, 'poll.yaml');
    writeFileSync(file, `name: poll\nsteps:\n  - { name: first, tool: echo }\n  - name: probe\n    tool: echo\n    repeat: { until: "$.this.n >= $.first.n", every: 1m, max_attempts: 3 }\n`);
    const { code, stdout, stderr } = await runCli(['validate', '--chains', dir, '--plugins', STUB, file]);
    expect({ code, stdout, stderr }).toMatchObject({ code: 0 });
  });
});

describe('toolchain test: a mocked repeat step', () => {
  it('answers each round from the sequence, without sleeping, and asserts the rounds and the exhaustion', async () => {
    const dir = mkdtempSync(join(root, 'tests-'));
    writeFileSync(
      join(dir, 'poll.yaml'),
      `name: poll
steps:
  - name: probe
    tool: echo
    repeat: { until: "$.this.state == 'done'", every: 1h, max_attempts: 4 }
outputs: { state: $.probe.state, round: $.probe.round }
`,
    );
    writeFileSync(
      join(dir, 'poll.test.yaml'),
      `chain: poll
cases:
  - name: done at the third round
    mocks:
      probe: { sequence: [ { output: { state: pending, round: 1 } }, { output: { state: pending, round: 2 } }, { output: { state: done, round: 3 } } ] }
    expect:
      outputs: { state: done, round: 3 }
      steps: { probe: { status: succeeded, attempts: 3 } }
  - name: never done
    mocks:
      probe: { output: { state: pending } }
    expect:
      status: failed
      error: REPEAT_EXHAUSTED
      steps: { probe: { status: failed, attempts: 4 } }
`,
    );
    // Rounds an hour apart: a sleep would outlast the CLI's 20 s (it is killed, exit 99).
    const { code, stdout, stderr } = await runCli(['test', '--chains', dir, '--plugins', STUB, '--json', join(dir, 'poll.test.yaml')], { cwd: dir });
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toContain('"passed": 2');
  });
});

describe('a polling run killed between rounds', () => {
  it('resumes from the CLI without running a recorded round again', async () => {
    const project = join(root, 'project');
    mkdirSync(project);
    const log = join(project, 'probe.log');
    const store = `sqlite:${join(project, 'runs.db')}`;
    const env = { PROBE_LOG: log, TOOLCHAIN_STORE: store };
    const child = spawn(process.execPath, [BIN, ...DIRS, 'run', 'poll', '--run-id', 'poll-1'], { cwd: project, env: { ...process.env, ...env }, stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    // Killed once round 2 is recorded and the run parked, in the sleep before round 3.
    for (let i = 0; i < 400 && !existsSync(join(project, 'runs.db')); i++) await pause(25);
    const reader = await openStore(store);
    try {
      const parkedAfter2 = async (): Promise<boolean> => (await reader.getRun('poll-1'))?.status === 'waiting' && (await reader.getSteps('poll-1')).some((s) => s.key === 'probe#2');
      for (let i = 0; i < 400 && !(await parkedAfter2()); i++) await pause(20);
      child.kill('SIGKILL');
      await exited;
      expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['poll-1:probe#1', 'poll-1:probe#2']);
      // Parked in the store: woken a second after round 2 ended.
      const round2 = (await reader.getSteps('poll-1')).find((s) => s.key === 'probe#2')!;
      const wakeAt = await reader.waits.wakeAt('poll-1');
      expect(wakeAt).toBe(round2.started_at + round2.duration_ms + 1_000);
      await pause(Math.max(0, wakeAt! - Date.now()) + 50);
      const resumed = await runCli([...DIRS, 'resume', 'poll-1'], { cwd: project, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toEqual({ n: 4 });
      expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['poll-1:probe#1', 'poll-1:probe#2', 'poll-1:probe#3', 'poll-1:probe#4']);
      const shown = await runCli([...DIRS, 'runs', 'show', 'poll-1', '--json'], { cwd: project, env });
      const detail = JSON.parse(shown.stdout) as { status: string; steps: Record<string, { status: string }> };
      expect(detail.status).toBe('succeeded');
      expect(Object.keys(detail.steps).sort()).toEqual(['probe', 'probe#1', 'probe#2', 'probe#3', 'probe#4']);
    } finally {
      await reader.close();
    }
  });
});
