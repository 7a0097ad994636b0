import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, STACK_LINE } from '../helpers/run-cli.js';

// Resume and idempotency from the command line, as real processes sharing one SQLite store: run ids, the runs
// list and detail, redrive, idempotency, two processes starting one id, cancel from another
// process, prune.

const BIN = join(REPO, 'bin', 'toolchain.js');
const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const root = mkdtempSync(join(tmpdir(), 'toolchain-cli-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}`, EFFECT_LOG: join(root, 'effects.log'), TOOLCHAIN_CACHE_DIR: join(root, 'cache') };
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];

function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...DIRS, ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr }),
    );
  });
}

const effects = (prefix: string): string[] =>
  readFileSync(env.EFFECT_LOG, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { key: string }).key)
    .filter((k) => k.startsWith(prefix));

describe('toolchain runs, resume and run ids', () => {
  it('run prints its id first; runs lists it; runs show draws its steps and --json has their outputs', async () => {
    const run = await cli(['run', 'line']);
    expect(run.code).toBe(0);
    const id = /^run ([0-9a-f-]{36})$/m.exec(run.stderr)![1]!;
    const list = await cli(['runs', '--json']);
    expect((JSON.parse(list.stdout) as { run_id: string; status: string }[]).find((r) => r.run_id === id)).toMatchObject({ chain: 'line', status: 'succeeded' });
    expect((await cli(['runs'])).stdout).toMatch(new RegExp(`^RUN +CHAIN +STATUS +STARTED +DURATION[\\s\\S]*${id} +line +succeeded`, 'm'));
    const shown = await cli(['runs', 'show', id]);
    expect(shown.stdout).toMatch(/STEP +STATUS +ATTEMPTS +DURATION/);
    expect(shown.stdout).toMatch(/^s11 +succeeded +1 /m);
    const detail = JSON.parse((await cli(['runs', 'show', id, '--json'])).stdout) as { status: string; steps: Record<string, { output: unknown }>; outputs: unknown };
    expect(detail).toMatchObject({ status: 'succeeded', outputs: { value: 12 }, steps: { s0: { output: { value: 1 } }, s11: { output: { value: 12 } } } });
    const missing = await cli(['runs', 'show', 'no-such-run']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/RUN_NOT_FOUND/);
    expect(missing.stderr).not.toMatch(STACK_LINE);
  });

  it('redrive: a run that failed at step b of a, b, c runs b and c only once b is fixed', async () => {
    const gate = join(root, 'gate');
    const failed = await cli(['run', 'gated', '--run-id', 'redrive-1', '--input', `gate=${gate}`]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/error: GATE .* \(step 'b'\)/);
    expect(effects('redrive-1:')).toEqual(['redrive-1:a']);
    writeFileSync(gate, 'open');
    const resumed = await cli(['resume', 'redrive-1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({ value: 4 });
    expect(effects('redrive-1:')).toEqual(['redrive-1:a', 'redrive-1:b', 'redrive-1:c']);
    // A finished run resumed again: nothing to do, the recorded result.
    expect(JSON.parse((await cli(['resume', 'redrive-1'])).stdout)).toEqual({ value: 4 });
    expect(effects('redrive-1:')).toHaveLength(3);
  });

  it('the same --run-id twice executes once; the second answer is the recorded result', async () => {
    const first = await cli(['run', 'line', '--run-id', 'same-1', '--json']);
    const second = await cli(['run', 'line', '--run-id', 'same-1', '--json']);
    // The same result (its duration is the store's, from the run's creation to its finish).
    const { duration_ms: _first, ...answer } = JSON.parse(first.stdout) as Record<string, unknown>;
    const { duration_ms: _second, ...again } = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(again).toEqual(answer);
    expect(effects('same-1:')).toHaveLength(12);
  });

  it('two processes starting one run id at once: exactly one runs it, the other is refused or answered', async () => {
    const [a, b] = await Promise.all([cli(['run', 'line', '--run-id', 'race-1', '--input', 'ms=20', '--json']), cli(['run', 'line', '--run-id', 'race-1', '--input', 'ms=20', '--json'])]);
    const outcomes = [a, b].map((r) => (r.code === 0 ? 'result' : /RUN_IN_PROGRESS/.test(r.stderr) ? 'in progress' : `other ${r.code} ${r.stderr}`));
    expect(outcomes.every((o) => o === 'result' || o === 'in progress')).toBe(true);
    expect(outcomes).toContain('result');
    expect(effects('race-1:')).toHaveLength(12);
  });

  it('runs cancel from another process stops the run within a second; it is recorded cancelled and resumable', async () => {
    const child = spawn(process.execPath, [BIN, ...DIRS, 'run', 'slow', '--run-id', 'cancel-1'], { cwd: root, env: { ...process.env, ...env } });
    // Listened for from the start: on a loaded machine the run can stop and the process exit
    // before `runs cancel` has returned, and an 'exit' listened for after it fired never comes.
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve) => child.stderr.on('data', (d: Buffer) => d.toString().includes('run cancel-1') && resolve()));
    await new Promise((r) => setTimeout(r, 300));
    const cancel = await cli(['runs', 'cancel', 'cancel-1']);
    expect(cancel.code, cancel.stderr).toBe(0);
    // 130, not 0: the run was stopped, not left to finish.
    expect(await exited).toBe(130);
    const detail = JSON.parse((await cli(['runs', 'show', 'cancel-1', '--json'])).stdout) as { status: string; error: { code: string } };
    expect(detail).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' } });
    expect((await cli(['runs', 'cancel', 'cancel-1'])).code).toBe(1);
  });

  it('runs prune forgets finished runs older than a duration', async () => {
    await cli(['run', 'line', '--run-id', 'prune-1']);
    await new Promise((r) => setTimeout(r, 1100));
    const pruned = await cli(['runs', 'prune', '--older-than', '1s']);
    expect(pruned.stdout).toMatch(/^pruned [1-9]\d* runs?$/m);
    expect((await cli(['runs', 'show', 'prune-1'])).code).toBe(2);
    const bad = await cli(['runs', 'prune', '--older-than', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--older-than/);
  });
});
