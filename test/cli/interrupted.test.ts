import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHeldRun } from '../helpers/killed-run.js';
import { REPO, runCli } from '../helpers/run-cli.js';

// A run whose process was killed with kill -9 is shown as interrupted (its owner is gone), with
// the command that resumes it — not as running for ever — and `resume` takes it up at once, even
// while the dead process is a zombie its parent has not reaped yet.

const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-interrupted-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Summary {
  readonly run_id: string;
  readonly status: string;
  readonly interrupted: boolean;
  readonly duration_ms: number;
  readonly started_at: number;
}

interface Detail extends Summary {
  readonly steps: Record<string, { status: string; started_at?: number }>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('a run killed with kill -9', () => {
  it('is interrupted in `runs` and `runs show` (its time stopped, the step at work interrupted), and resumes at once', async () => {
    const env = { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}`, EFFECT_LOG: join(root, 'effects.log') };
    const held = await startHeldRun([...DIRS, 'run', 'line', '--input', 'ms=150', '--run-id', 'killed-1'], { cwd: root, env });
    try {
      expect(await held.runId).toBe('killed-1');
      // A few steps in: s0..s2 recorded, one at work.
      await sleep(600);
      held.kill9();
      await sleep(50);
      expect(held.state()).toBe('Z');
      const cli = (args: string[]) => runCli([...DIRS, ...args], { cwd: root, env });

      const list = JSON.parse((await cli(['runs', '--json'])).stdout) as Summary[];
      expect(list).toEqual([expect.objectContaining({ run_id: 'killed-1', status: 'running', interrupted: true })]);
      expect((await cli(['runs'])).stdout).toMatch(/killed-1\s+line\s+interrupted\s/);

      const first = JSON.parse((await cli(['runs', 'show', 'killed-1', '--json'])).stdout) as Detail;
      expect(first).toMatchObject({ status: 'running', interrupted: true });
      const statuses = Object.values(first.steps).map((s) => s.status);
      expect(statuses).toContain('succeeded');
      expect(statuses.filter((s) => s === 'interrupted')).toHaveLength(1);
      expect(statuses).not.toContain('running');
      await sleep(400);
      const later = JSON.parse((await cli(['runs', 'show', 'killed-1', '--json'])).stdout) as Detail;
      // Its time stopped with its owner: it does not grow.
      expect(later.duration_ms).toBe(first.duration_ms);
      const text = (await cli(['runs', 'show', 'killed-1'])).stdout;
      expect(text).toMatch(/^run killed-1 {2}chain line {2}interrupted /);
      expect(text).toContain('resume it with: toolchain resume killed-1');

      // The process is still a zombie: `resume` sees that it is dead and takes the run up.
      expect(held.state()).toBe('Z');
      const resumed = await cli(['resume', 'killed-1', '--json']);
      expect(resumed.stderr).not.toContain('RUN_IN_PROGRESS');
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: 'killed-1', status: 'succeeded', outputs: { value: 12 } });
      const done = JSON.parse((await cli(['runs', 'show', 'killed-1', '--json'])).stdout) as Detail;
      expect(done).toMatchObject({ status: 'succeeded', interrupted: false, started_at: first.started_at });
    } finally {
      held.release();
    }
  }, 60_000);
});
