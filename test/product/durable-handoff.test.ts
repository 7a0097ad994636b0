import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';
import { POSTGRES_URL } from '../helpers/services.js';

// A step reads only what is recorded. Chain A → B: A returns a fresh random id, B appends the id
// it was given to an effects file and then keeps the process busy. The test kills the CLI with
// SIGKILL the instant B's line appears, then resumes the run. Had B started before A's result was
// written, the resume would run A again (a new id) and B with it: B would have acted on two ids.
// Every id B ever received must be the id the store holds for A at the end. The commands that
// stay up (serve, watch) resume such a run on their own, with no caller.

const BIN = join(REPO, 'bin', 'toolchain.js');
const FIXTURE = join(REPO, 'test', 'fixtures', 'handoff');
const ROUNDS = 50;
const root = mkdtempSync(join(tmpdir(), 'toolchain-handoff-'));
const schema = `handoff_${process.pid}`;
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

interface Effect {
  readonly key: string;
  readonly id: string;
}

function readEffects(file: string): Effect[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Effect);
}

const globals = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];

/** Starts `toolchain run handoff` and kills it with SIGKILL the moment the effects file has a line; resolves once it is gone. */
function runUntilEffect(runId: string, store: string, effects: string): Promise<{ killed: boolean; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...globals, 'run', 'handoff', '--run-id', runId, '--store', store], {
    cwd: root,
    env: { ...process.env, EFFECT_LOG: effects, HANDOFF_HOLD_MS: '20000' },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let killed = false;
  const look = (): void => {
    if (killed || !existsSync(effects) || readFileSync(effects, 'utf8').length === 0) return;
    killed = true;
    child.kill('SIGKILL');
  };
  // The folder's change events, and a poll for a missed one.
  const watcher = watch(root, look);
  const poll = setInterval(look, 2);
  return new Promise((resolve) =>
    child.on('exit', () => {
      watcher.close();
      clearInterval(poll);
      resolve({ killed, stderr });
    }),
  );
}

async function recordedId(store: string, runId: string): Promise<{ status: string | undefined; a: unknown }> {
  const s = await openStore(store);
  try {
    const run = await s.getRun(runId);
    const a = (await s.getSteps(runId)).find((step) => step.key === 'A' && step.status === 'succeeded');
    return { status: run?.status, a: (a?.output as { id?: unknown } | undefined)?.id };
  } finally {
    await s.close();
  }
}

const stores: [string, () => string][] = [
  ['SQLite', () => `sqlite:${join(root, 'runs.db')}`],
  ['PostgreSQL', () => `${POSTGRES_URL}?schema=${schema}`],
];

describe('kill -9 the instant B acts on the id A returned, then resume', () => {
  for (const [name, url] of stores) {
    it(`${name}: ${ROUNDS} rounds; every id B received is the id recorded for A`, async () => {
      const store = url();
      for (let round = 0; round < ROUNDS; round++) {
        const runId = `${name.toLowerCase()}-${round}`;
        const effects = join(root, `${runId}.effects`);
        const first = await runUntilEffect(runId, store, effects);
        expect(first.killed, first.stderr).toBe(true);
        const resumed = await runCli([...globals, 'resume', runId, '--store', store], { cwd: root, env: { EFFECT_LOG: effects } });
        expect(resumed.code, resumed.stderr).toBe(0);
        const { status, a } = await recordedId(store, runId);
        expect(status).toBe('succeeded');
        const received = readEffects(effects);
        expect(received.length).toBeGreaterThanOrEqual(2);
        expect(received.map((e) => e.key)).toEqual(received.map(() => `${runId}:B`));
        expect(received.map((e) => e.id)).toEqual(received.map(() => a));
      }
    }, 600_000);
  }
});

/** Polls the store until the run is no longer running (an interrupted run waits for ever without recovery). */
async function untilFinished(store: string, runId: string): Promise<string | undefined> {
  for (;;) {
    const { status } = await recordedId(store, runId);
    if (status !== 'running') return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('an interrupted run is resumed without a caller', () => {
  it('by `toolchain serve` as it starts, and by `toolchain watch`; not with --no-recover', async () => {
    const store = `sqlite:${join(root, 'recover.db')}`;
    const kill = async (runId: string): Promise<string> => {
      const effects = join(root, `${runId}.effects`);
      expect((await runUntilEffect(runId, store, effects)).killed).toBe(true);
      expect((await recordedId(store, runId)).status).toBe('running');
      return effects;
    };

    const held = await kill('held');
    const refusing = await startServe({ cwd: root, globals, args: ['--store', store, '--no-recover'], env: { EFFECT_LOG: held } });
    // Its own run finishes while the interrupted one stays so: recovery would have come first.
    const own = await runCli([...globals, 'run', 'handoff', '--store', store], { cwd: root, env: { EFFECT_LOG: join(root, 'own.effects') } });
    expect(own.code, own.stderr).toBe(0);
    expect((await recordedId(store, 'held')).status).toBe('running');
    await refusing.stop();

    const serve = await startServe({ cwd: root, globals, args: ['--store', store], env: { EFFECT_LOG: held } });
    try {
      expect(await untilFinished(store, 'held')).toBe('succeeded');
    } finally {
      await serve.stop();
    }
    // Read once serve has ended: its log is written in batches, so a line may still be on its way while it runs.
    expect(serve.stdout()).toContain('run held (handoff) was interrupted: resuming it');
    const { a } = await recordedId(store, 'held');
    expect(readEffects(held).map((e) => e.id)).toEqual([a, a]);

    const watched = await kill('watched');
    const watcher = spawn(process.execPath, [BIN, ...globals, 'watch', '--store', store], { cwd: root, env: { ...process.env, EFFECT_LOG: watched } });
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      expect(await untilFinished(store, 'watched')).toBe('succeeded');
    } finally {
      watcher.kill('SIGTERM');
    }
    await new Promise((r) => watcher.on('exit', r));
    expect(out).toContain('run watched (handoff) resumed: succeeded');
    const recorded = (await recordedId(store, 'watched')).a;
    expect(readEffects(watched).map((e) => e.id)).toEqual([recorded, recorded]);
  }, 120_000);
});
