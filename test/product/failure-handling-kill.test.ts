import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { REPO } from '../helpers/run-cli.js';

// Failure handling survives kill -9. The trip chain's last step fails; its on_failure steps, four
// compensations and finally steps follow. A round starts `toolchain run` (or `toolchain resume`)
// on a SQLite store with one step marked: its tool either hangs before it does anything, and the
// test kills the process with SIGKILL once it says so, or kills its own process with SIGKILL
// the moment it is called (no time for anything in flight to be written). The run is then
// resumed — sometimes into a second kill — until a resume with no mark finishes it. Every tool
// appends its step key to an effect log when it has done its work: each step, handler and
// compensation must have done it exactly once (none lost, none run twice), and the run must end
// as a run that was never killed does.

const BIN = join(REPO, 'bin', 'toolchain.js');
const SAGA = join(REPO, 'test', 'fixtures', 'saga');
const root = mkdtempSync(join(tmpdir(), 'toolchain-saga-kill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** In the order a run that is never killed does them. */
const EFFECTS = ['flight', 'hotel', 'car', 'pay', 'notify_ops', 'log_failure', 'pay~compensate', 'car~compensate', 'hotel~compensate', 'flight~compensate', 'release', 'report'];
/** Where a process is killed: while the failing step runs, and at each handler and compensation. */
const HANG_POINTS = ['ticket', 'notify_ops', 'log_failure', 'pay~compensate', 'car~compensate', 'hotel~compensate', 'flight~compensate', 'release', 'report'];

interface Env {
  readonly dir: string;
  readonly store: string;
  readonly log: string;
}

type Mark = { readonly hang: string } | { readonly die: string } | undefined;

function cli(env: Env, args: readonly string[], mark: Mark): { exited: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>; hung: Promise<boolean>; kill(): void } {
  const hangFile = join(env.dir, `hung-${Math.random().toString(36).slice(2)}`);
  const child = spawn(process.execPath, [BIN, '--chains', join(SAGA, 'chains'), '--plugins', join(SAGA, 'plugins'), ...args], {
    cwd: env.dir,
    env: {
      ...process.env,
      TOOLCHAIN_STORE: env.store,
      TOOLCHAIN_CACHE_DIR: join(root, 'cache'),
      SAGA_LOG: env.log,
      ...(mark && 'hang' in mark ? { SAGA_HANG: mark.hang, SAGA_HANG_FILE: hangFile } : {}),
      ...(mark && 'die' in mark ? { SAGA_DIE: mark.die } : {}),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  // The tool writes the file as it starts to hang; a process that exits first never hung.
  const hung = new Promise<boolean>((resolve) => {
    let done = false;
    void exited.then(() => ((done = true), resolve(false)));
    const look = (): void => {
      if (done) return;
      if (existsSync(hangFile)) return resolve(true);
      setTimeout(look, 10);
    };
    look();
  });
  return { exited, hung, kill: () => child.kill('SIGKILL') };
}

function effects(log: string): string[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { key: string }).key);
}

/** Runs `args` and has the process killed with SIGKILL at `point`: by the test once the tool hangs there, or by the tool itself. */
async function killedAt(env: Env, args: readonly string[], point: string, how: 'hang' | 'die'): Promise<void> {
  const p = cli(env, args, how === 'hang' ? { hang: point } : { die: point });
  if (how === 'hang') {
    const hung = await p.hung;
    expect(hung, `the process never reached '${point}'`).toBe(true);
    p.kill();
  }
  const { signal, stderr } = await p.exited;
  expect(signal, `the process was to be killed at '${point}': ${stderr}`).toBe('SIGKILL');
}

describe('kill -9 during failure handling, then resume', () => {
  for (const how of ['hang', 'die'] as const) {
    it(`every step, handler and compensation does its work exactly once, killed ${how === 'hang' ? 'by the test while a tool hangs' : 'by a tool as it is called'}`, async () => {
      let kills = 0;
      for (const [round, point] of HANG_POINTS.entries()) {
        const dir = mkdtempSync(join(root, `${how}-${round}-`));
        const env: Env = { dir, store: `sqlite:${join(dir, 'runs.db')}`, log: join(dir, 'effects.log') };
        const runId = `trip-${round}`;
        await killedAt(env, ['run', 'trip', '--input', 'tickets=false', '--run-id', runId, '--json'], point, how);
        kills++;
        // Every other round, the first resume is killed too, at a later point.
        const later = round % 2 === 0 ? HANG_POINTS[round + 2] : undefined;
        if (later !== undefined) {
          await killedAt(env, ['resume', runId, '--json'], later, how);
          kills++;
        }
        const done = await cli(env, ['resume', runId, '--json'], undefined).exited;
        expect(done.code, done.stderr).toBe(1);
        expect(JSON.parse(done.stdout)).toMatchObject({ run_id: runId, status: 'failed', error: { code: 'TICKETS_UNAVAILABLE', step: 'ticket' } });
        const keys = effects(env.log).map((k) => k.slice(runId.length + 1));
        expect(keys, `killed at '${point}'${later ? ` and '${later}'` : ''}`).toEqual(EFFECTS);
        const store = await openStore(env.store);
        try {
          const steps = await store.getSteps(runId);
          for (const name of EFFECTS) expect(steps.find((s) => s.key === name)?.status, name).toBe('succeeded');
          expect((await store.getRun(runId))?.status).toBe('failed');
        } finally {
          await store.close();
        }
      }
      expect(kills).toBeGreaterThanOrEqual(10);
    }, 240_000);
  }
});
