import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import { REPO } from '../helpers/run-cli.js';

// Runs that wait, killed. Six runs of a chain that does something (a), sleeps, waits for an
// event and for a person, then does something else (b), each started by a `toolchain run` of its
// own, with `toolchain watch` processes waking and recovering them. At random moments the test
// kills one of those processes with SIGKILL (a `watch` killed is started again; a `run` killed
// is not: its run must go on without it). Meanwhile it sends each run's event and approves each
// request, again and again, as impatient people do. It checks only invariants: every run ends
// with the right outputs; no step whose result was recorded ran again afterwards; each run's
// event was consumed once and its decision made once (every later send or decision is refused
// or a no-op), and no wait was opened twice.

const BIN = join(REPO, 'bin', 'toolchain.js');
const FIXTURE = join(REPO, 'test', 'fixtures', 'waits-crash');
const RUNS = 6;
const KILLS = 12;
const root = mkdtempSync(join(tmpdir(), 'toolchain-waits-kill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Effect {
  readonly key: string;
  readonly label: string;
  readonly n: string;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('waiting runs killed with SIGKILL', () => {
  it(`${KILLS} kills among ${RUNS} runs that sleep, wait for events and for approvals: nothing recorded lost or run twice`, async () => {
    const store = `sqlite:${join(root, 'runs.db')}`;
    const effects = join(root, 'effects.log');
    const env = { ...process.env, EFFECT_LOG: effects };
    const globals = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
    const live = new Set<ChildProcess>();
    const launch = (args: string[]): ChildProcess => {
      const child = spawn(process.execPath, [BIN, ...globals, ...args], { cwd: root, env, stdio: 'ignore' });
      live.add(child);
      child.on('exit', () => live.delete(child));
      return child;
    };
    const watchers = new Set<ChildProcess>();
    const watcher = (): void => {
      const child = launch(['watch', '--store', store]);
      watchers.add(child);
      child.on('exit', () => watchers.delete(child));
    };
    const keys = Array.from({ length: RUNS }, (_, i) => `run-${i}`);
    for (const key of keys) launch(['run', 'flow', '--run-id', key, '--input', `key=${key}`, '--store', store]);
    watcher();
    watcher();
    // Kills start once every run is recorded (a `run` killed before it created its run leaves nothing to check).
    const reader = await openStore(store);
    for (let i = 0; i < 300 && (await Promise.all(keys.map((k) => reader.getRun(k)))).some((r) => r === undefined); i++) await pause(50);

    // The people: send each run's event once it waits for it (an event sent before is not seen,
    // and its id could not be sent again), then again and again; approve each request, repeatedly.
    const people = await createEngine({ cache: 'off', store });
    const waitingFor = async (): Promise<Set<string>> => new Set((await reader.waits.listWaits({ kind: 'event', name: 'paid' }).catch(() => [])).map((w) => w.run_id));
    const decisions = { made: 0, refused: 0 };
    const sends = { delivered: new Map<string, number>(), repeats: 0 };
    let stop = false;
    const act = (async () => {
      while (!stop) {
        const ready = await waitingFor();
        for (const key of keys) {
          if (!ready.has(key)) continue;
          const sent = await people.emit('paid', { key, amount: 10 }, { id: `pay-${key}` }).catch(() => undefined);
          if (sent?.new) for (const r of sent.delivered) sends.delivered.set(r, (sends.delivered.get(r) ?? 0) + 1);
          else if (sent) sends.repeats++;
        }
        for (const request of await people.approvals.list().catch(() => [])) {
          try {
            await people.approvals.decide(request.id, { approved: true, by: 'tester' });
            decisions.made++;
          } catch {
            decisions.refused++;
          }
        }
        await pause(40);
      }
    })();

    // The kills: a random live process at a random moment; a watch is started again.
    for (let k = 0; k < KILLS; k++) {
      await pause(80 + Math.floor(Math.random() * 320));
      const victims = [...live];
      const victim = victims[Math.floor(Math.random() * victims.length)];
      if (victim === undefined) continue;
      const wasWatcher = watchers.has(victim);
      victim.kill('SIGKILL');
      await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r(undefined) : victim.once('exit', r)));
      if (wasWatcher || watchers.size === 0) watcher();
    }
    if (watchers.size === 0) watcher();

    // Every run ends (the watches wake and recover them), with the right outputs.
    for (let i = 0; i < 600; i++) {
      const runs = await Promise.all(keys.map((k) => reader.getRun(k)));
      if (runs.every((r) => r?.status === 'succeeded')) break;
      await pause(100);
    }
    stop = true;
    await act;
    for (const child of live) child.kill('SIGKILL');
    const runs = await Promise.all(keys.map((k) => reader.getRun(k)));
    expect(runs.map((r) => r?.status)).toEqual(keys.map(() => 'succeeded'));

    const lines: Effect[] = existsSync(effects) ? readFileSync(effects, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Effect) : [];
    for (const key of keys) {
      const run = runs[keys.indexOf(key)]!;
      const outputs = run.outputs as { a: string; b: string; amount: number; by: string };
      expect(outputs).toMatchObject({ amount: 10, by: 'tester' });
      // No recorded step ran again: its recorded call is the last call of it.
      for (const [step, n] of [['a', outputs.a], ['10', outputs.b]] as const) {
        const calls = lines.filter((l) => l.key === `${key}:${step === 'a' ? 'a' : 'b'}` && l.label === step);
        expect(calls.map((c) => c.n)).toContain(n);
        expect(calls[calls.length - 1]!.n).toBe(n);
      }
      // One wait per waiting step: none opened again under another key (a wait that ran twice).
      const waits = await reader.waits.listWaits({ run_id: key });
      expect(waits.map((w) => w.key).sort()).toEqual(['nap', 'ok', 'paid']);
      expect(waits.every((w) => w.kind === 'sleep' || w.outcome !== null)).toBe(true);
    }
    // Each event was delivered once, to its run; each request decided once.
    expect([...sends.delivered.entries()].sort()).toEqual(keys.map((k) => [k, 1]));
    expect(decisions.made).toBe(RUNS);
    await reader.close();
    await people.close();
  }, 120_000);
});
