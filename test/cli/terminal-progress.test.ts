import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/run-cli.js';

// The live progress display in a real pseudo-terminal (tmux), at 40 and 120 columns: one row per
// step however narrow the terminal (log-update wraps, redraws do not pile up), elapsed times, and
// one summary line at the end. Plus the process side: `run` exits once its result is printed
// although a tool left a timer running, and --verbose shows the tools' ctx.log lines.

const SOCKET = `toolchain-test-${process.pid}`;
const ARGS = '--chains test/fixtures/terminal/chains --plugins test/fixtures/terminal/plugins run naps';

function tmux(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', ['-L', SOCKET, ...args], { cwd: REPO, timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

afterAll(() => tmux('kill-server').catch(() => undefined));

async function screenAfterRun(columns: number, extra = ''): Promise<string> {
  const session = `w${columns}`;
  const command = `cd ${REPO} && node bin/toolchain.js ${ARGS} ${extra} > /dev/null; echo EXIT=$?; sleep 60`;
  await tmux('new-session', '-d', '-s', session, '-x', String(columns), '-y', '40', command);
  const deadline = Date.now() + 20_000;
  let screen = '';
  while (Date.now() < deadline) {
    screen = await tmux('capture-pane', '-p', '-J', '-t', session);
    if (/EXIT=\d+/.test(screen)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await tmux('kill-session', '-t', session);
  return screen;
}

describe('the progress display in a terminal', () => {
  for (const columns of [40, 120]) {
    it(`shows each step once and a summary line at ${columns} columns`, async () => {
      const screen = await screenAfterRun(columns);
      expect(screen).toMatch(/EXIT=0/);
      const lines = screen.split('\n');
      // Each step once, the long one wrapped onto two rows at 40 columns: redraws left nothing behind.
      const shown = lines.slice(0, lines.findIndex((l) => l.startsWith('EXIT=')));
      // The run's id first (so that it can be resumed), then the block.
      expect(shown[0]).toMatch(/^run [0-9a-f-]{36}$/);
      const block = shown.slice(1);
      expect(block).toHaveLength(columns === 40 ? 5 : 4);
      expect(lines.filter((l) => /✓ first\s+\d+ms/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => l.includes('✓ a_step_whose_name_is_long_enough_to_wr'))).toHaveLength(1);
      expect(lines.filter((l) => /✓ last\s+\d+ms/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /naps succeeded in [\d.]+m?s: 3 succeeded/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => l.includes('…'))).toEqual([]);
    });
  }

  it('shows ctx.log lines above the block with --verbose', async () => {
    const screen = await screenAfterRun(120, '--verbose');
    const lines = screen.split('\n');
    expect(lines.filter((l) => l.includes('[first] napping {"ms":300}'))).toHaveLength(1);
    expect(lines.filter((l) => /✓ first/.test(l))).toHaveLength(1);
  });
});

describe('the run command as a process', () => {
  it('exits as soon as the result is printed, although a tool left a timer running', async () => {
    const { code, stdout, stderr } = await runCli(ARGS.split(' ').concat('--verbose'));
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ labels: 'one three' });
    expect(stderr).toContain('[last] napping {"ms":300}');
    // The naps take 1.2 s; a process kept alive by the interval would hit runCli's 20 s timeout.
  });

  it("--verbose says which for_each element each ctx.log line comes from, also under isolation", async () => {
    for (const isolation of ['none', 'worker']) {
      const { code, stderr } = await runCli(['--chains', 'test/fixtures/terminal/chains', '--plugins', 'test/fixtures/terminal/plugins', 'run', 'many', '--input-json', '{"items":[1,2,3]}', '--verbose', '--isolation', isolation]);
      expect(code, stderr).toBe(0);
      const lines = stderr.split('\n').filter((l) => l.includes('napping'));
      expect(lines.sort()).toEqual(['[each[0]] napping {"ms":250}', '[each[1]] napping {"ms":250}', '[each[2]] napping {"ms":250}']);
    }
  });
});

describe('a for_each in the progress display', () => {
  it('counts its elements as they finish (n/N) while it runs', async () => {
    const session = 'foreach';
    const command = `cd ${REPO} && node bin/toolchain.js --chains test/fixtures/terminal/chains --plugins test/fixtures/terminal/plugins run many > /dev/null; echo EXIT=$?; sleep 60`;
    await tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '20', command);
    const seen = new Set<string>();
    const deadline = Date.now() + 20_000;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await tmux('capture-pane', '-p', '-J', '-t', session);
      for (const m of screen.matchAll(/… each\s+(\d)\/8 · /g)) seen.add(m[1]!);
      if (/EXIT=\d+/.test(screen)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await tmux('kill-session', '-t', session);
    expect(screen).toMatch(/EXIT=0/);
    // Eight naps of 250 ms two at a time: 1 s of counts, seen several times at 50 ms polls.
    expect(seen.size).toBeGreaterThanOrEqual(2);
    expect([...seen].every((n) => Number(n) < 8)).toBe(true);
    expect(screen).toMatch(/✓ each\s+\d+(ms|\.\ds)/);
  });
});

describe('the progress rows', () => {
  it('show how long a running step has been at work', async () => {
    const { ProgressState } = await import('../../src/cli/progress/progress-state.js');
    const state = new ProgressState();
    state.apply({ type: 'run:started', run_id: 'r', chain: 'c', timestamp: 0, parent: undefined, input: {} }, 0);
    state.apply({ type: 'step:started', run_id: 'r', chain: 'c', timestamp: 0, parent: undefined, step: 'a', index: 0, item: undefined, call: undefined, attempt: 1 }, 1000);
    expect(state.text(3500)).toContain('a  \u001b[90m2.5s');
    expect(state.busy).toBe(true);
    state.progress({ run_id: 'r', step: 'a', done: 3, total: 10 });
    expect(state.text(3500)).toContain('a  \u001b[90m3/10 · 2.5s');
  });
});
