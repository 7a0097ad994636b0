import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';

// Three real processes on one SQLite store — two `toolchain serve` and a `toolchain watch` — one
// chain with `every: 1s`, for 15 s: each process fires every tick, and the store keeps one run of
// each (the run id names the tick). One server is killed with SIGKILL half-way: the other two go
// on, and still no tick is lost or doubled. `overlap: allow`, so that a run the killed process held (running until recovery takes
// it over) does not make the others skip ticks meanwhile: this test is about ticks, not overlap.

const BIN = join(REPO, 'bin', 'toolchain.js');
const dir = mkdtempSync(join(tmpdir(), 'toolchain-triggers-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function startWatch(db: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'watch', '--store', `sqlite:${db}`], { cwd: dir, env: { ...process.env, TOOLCHAIN_CACHE_DIR: join(dir, 'cache') }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`watch did not start: ${out}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('watching')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`watch exited (${code}): ${out}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

describe('two servers and a watch fire one every: 1s trigger', () => {
  it('one run per tick, no tick doubled or lost, one process killed half-way', async () => {
    mkdirSync(join(dir, 'chains'));
    mkdirSync(join(dir, 'plugins'));
    writeFileSync(join(dir, 'chains', 'tick.yaml'), 'name: tick\ntriggers:\n  - every: 1s\n    overlap: allow\nsteps:\n  - name: nap\n    sleep: 5ms\n');
    const db = join(dir, 'runs.db');
    const serveOn = () => startServe({ cwd: dir, args: ['--store', `sqlite:${db}`], env: { TOOLCHAIN_CACHE_DIR: join(dir, 'cache') } });
    const first = await serveOn();
    const startedAt = Date.now();
    const [second, third] = await Promise.all([serveOn(), startWatch(db)]);
    await sleep(7_500);
    process.kill(second.pid, 'SIGKILL');
    await sleep(7_500);
    const stoppedAt = Date.now();
    await Promise.all([first.stop(), stop(third)]);

    const store = await openStore(`sqlite:${db}`);
    const runs = await store.listRuns({ chain: 'tick', limit: 1000 });
    await store.close();
    const ticks = runs.map((r) => {
      const m = /^tick#1@(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(r.id);
      expect(m, r.id).not.toBeNull();
      return Date.parse(`${m![1]}-${m![2]}-${m![3]}T${m![4]}:${m![5]}:${m![6]}Z`);
    }).sort((a, b) => a - b);
    // No tick twice.
    expect(new Set(ticks).size).toBe(ticks.length);
    // No gap: every second from the first tick to the last has its run.
    const gaps = ticks.slice(1).filter((t, i) => t - ticks[i]! !== 1000);
    expect(gaps).toEqual([]);
    // As many runs as seconds went by while a process ran, give or take one (a tick at either edge).
    const elapsed = Math.floor(stoppedAt / 1000) - Math.floor(startedAt / 1000);
    expect(Math.abs(ticks.length - elapsed)).toBeLessThanOrEqual(1);
  }, 60_000);
});

describe('toolchain triggers and validate', () => {
  it('lists each trigger with its next three fire times and its last run; validate reports a bad cron at its key', async () => {
    const project = mkdtempSync(join(tmpdir(), 'toolchain-triggers-cli-'));
    try {
      mkdirSync(join(project, 'chains'));
      mkdirSync(join(project, 'plugins'));
      const env = { TOOLCHAIN_CACHE_DIR: join(project, 'cache') };
      writeFileSync(join(project, 'chains', 'report.yaml'), 'name: report\ntriggers:\n  - schedule: "0 6 * * 1-5"\n    timezone: Europe/Paris\n  - every: 1h\n    id: hourly\n    enabled: false\nsteps:\n  - name: nap\n    sleep: 1ms\n');
      const store = `sqlite:${join(project, 'runs.db')}`;
      // A run of the first trigger, as a process firing it would have named it.
      const ran = await runCli(['run', 'report', '--run-id', 'report#1@20261201T050000Z', '--store', store], { cwd: project, env });
      expect(ran.code, ran.stderr).toBe(0);
      const listed = await runCli(['triggers', '--json', '--store', store], { cwd: project, env });
      expect(listed.code, listed.stderr).toBe(0);
      const views = JSON.parse(listed.stdout) as { id: string; next: string[]; last?: { run_id: string; status: string } }[];
      expect(views.map((v) => v.id)).toEqual(['1', 'hourly']);
      expect(views[0]!.next).toHaveLength(3);
      for (const at of views[0]!.next) expect(new Date(at).getUTCHours() === 5 || new Date(at).getUTCHours() === 4).toBe(true); // 06:00 Paris
      expect(views[0]!.last).toEqual({ run_id: 'report#1@20261201T050000Z', tick: '2026-12-01T05:00:00.000Z', status: 'succeeded' });
      expect(views[1]).toMatchObject({ enabled: false, next: [] });
      expect(views[1]!.last).toBeUndefined();

      writeFileSync(join(project, 'chains', 'report.yaml'), 'name: report\ntriggers:\n  - schedule: "0 6 * 13 *"\nsteps:\n  - name: nap\n    sleep: 1ms\n');
      const validated = await runCli(['validate'], { cwd: project, env });
      expect(validated.code).toBe(2);
      expect(validated.stdout + validated.stderr).toContain("report.yaml:3:15 BAD_CRON cron field 4 (month) '13' is not valid: it allows 1-12 or JAN-DEC and * , - /");
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);
});
