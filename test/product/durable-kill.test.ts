import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { REPO } from '../helpers/run-cli.js';

// Resume and idempotency, proven with crashes: a child process runs a chain whose every step appends its key to
// an effect log; the test kills it with SIGKILL at a random moment, reads what the store recorded,
// and starts the same run id again (which resumes a run whose owner died). Every round ends with
// the right outputs, and no step whose result was recorded before a process started ran in that
// process. Some rounds have steps that take no time, so the kill lands among the group commits.

const BIN = join(REPO, 'bin', 'toolchain.js');
const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const root = mkdtempSync(join(tmpdir(), 'toolchain-kill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Effect {
  readonly key: string;
  readonly pid: number;
}

function readEffects(file: string): Effect[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Effect);
  } catch {
    return [];
  }
}

interface Child {
  readonly pid: number;
  /** Resolves when the child printed its run id (it is about to run). */
  readonly started: Promise<void>;
  readonly exited: Promise<{ code: number | null; stdout: string }>;
  kill(): void;
}

function start(chain: string, runId: string, input: Record<string, number>, env: Record<string, string>): Child {
  const args = [BIN, '--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins'), 'run', chain, '--run-id', runId, '--json'];
  for (const [k, v] of Object.entries(input)) args.push('--input', `${k}=${v}`);
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const started = new Promise<void>((resolve) => child.stderr.on('data', (d: Buffer) => d.toString().includes('run ') && resolve()));
  const exited = new Promise<{ code: number | null; stdout: string }>((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
  return { pid: child.pid!, started: Promise.race([started, exited.then(() => undefined)]), exited, kill: () => child.kill('SIGKILL') };
}

async function recordedSuccesses(storeUrl: string, runId: string): Promise<Set<string>> {
  const store = await openStore(storeUrl);
  try {
    return new Set((await store.getSteps(runId)).filter((s) => s.status === 'succeeded').map((s) => s.key));
  } finally {
    await store.close();
  }
}

interface Scenario {
  readonly chain: string;
  readonly outputs: unknown;
  /** Step keys a complete run records (steps, for_each elements, sub-chain steps). */
  readonly keys: number;
  /** Tool calls a complete run makes. */
  readonly calls: number;
}

const scenarios: Scenario[] = [
  { chain: 'line', outputs: { value: 12 }, keys: 12, calls: 12 },
  { chain: 'fan', outputs: { values: Array.from({ length: 50 }, (_, i) => i + 1) }, keys: 51, calls: 50 },
  { chain: 'outer', outputs: { value: 114 }, keys: 15, calls: 14 },
];

describe('kill -9 at a random moment, then resume', () => {
  for (const scenario of scenarios) {
    it(`${scenario.chain}: 20 rounds, each killed once then resumed: right outputs, nothing recorded runs again`, async () => {
      const dir = mkdtempSync(join(root, `${scenario.chain}-`));
      const storeUrl = `sqlite:${join(dir, 'runs.db')}`;
      const log = join(dir, 'effects.log');
      const env = { TOOLCHAIN_STORE: storeUrl, EFFECT_LOG: log, TOOLCHAIN_CACHE_DIR: join(root, 'cache') };
      let killedMidRun = 0;
      for (let round = 0; round < 20; round++) {
        const runId = `${scenario.chain}-${round}`;
        const ms = [0, 5, 25][round % 3]!;
        const first = start(scenario.chain, runId, { ms }, env);
        await first.started;
        // Anywhere from before the first step to past the last (steps of 0 ms: among the group commits).
        await new Promise((r) => setTimeout(r, Math.random() * (ms === 0 ? 30 : ms * 14)));
        first.kill();
        const killed = await first.exited;
        const recorded = await recordedSuccesses(storeUrl, runId);
        if (killed.code === null && recorded.size < scenario.keys) killedMidRun++;
        // The same run id again: its owner died, so the run is resumed.
        const second = start(scenario.chain, runId, { ms }, env);
        const done = await second.exited;
        expect(done.code, done.stdout).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ run_id: runId, status: 'succeeded', outputs: scenario.outputs });
        const effects = readEffects(log).filter((e) => e.key.startsWith(`${runId}:`));
        const rerun = effects.filter((e) => e.pid === second.pid && recorded.has(e.key.slice(runId.length + 1)));
        expect(rerun, `round ${round}: the resumed process re-ran recorded steps`).toEqual([]);
        // At least once: every tool call happened; at most once more, for the one kill.
        const counts = new Map<string, number>();
        for (const e of effects) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
        expect(counts.size).toBe(scenario.calls);
        for (const n of counts.values()) expect(n).toBeLessThanOrEqual(2);
        expect((await recordedSuccesses(storeUrl, runId)).size).toBe(scenario.keys);
      }
      // The kills landed mid-run, not only before the start or after the end.
      expect(killedMidRun).toBeGreaterThanOrEqual(10);
    }, 240_000);
  }
});
