import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/index.js';
import { startPrivateRedis, type PrivateRedis } from '../fixtures/store/private-redis.js';
import { readEffects, sleep, startWorker, type WorkerProcess } from '../helpers/queue-cluster.js';
import { REPO } from '../helpers/run-cli.js';

// Runs that wait, on a queue, killed: six runs of a chain that does something, sleeps, waits for
// an event and a person, then does something else, executed by two `toolchain worker`
// processes on one Redis. At random moments one worker is killed with SIGKILL and a new one
// started. A run that parks frees its worker's slot; a run whose wait is over goes back on the
// queue. Only invariants are checked: right outputs, no recorded step run again, each event and
// each decision consumed once.

const FIXTURE = join(REPO, 'test', 'fixtures', 'waits-crash');
const RUNS = 6;
const KILLS = 10;
let redis: PrivateRedis;
let submitter: Engine;
let people: Engine;
let store: RunStore;
const workers = new Set<WorkerProcess>();
const root = mkdtempSync(join(tmpdir(), 'toolchain-queue-waits-'));

beforeAll(async () => {
  redis = await startPrivateRedis(['--appendonly', 'no']);
  submitter = await createEngine({ chainsDir: join(FIXTURE, 'chains'), queue: redis.url, cache: 'off' });
  people = await createEngine({ store: redis.url, cache: 'off' });
  store = await openStore(redis.url);
});
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all([...workers].map((w) => w.exited));
  await store?.close();
  await people?.close();
  await submitter?.close();
  await redis?.destroy();
  rmSync(root, { recursive: true, force: true });
});

describe('waiting runs on a queue, workers killed with SIGKILL', () => {
  it(`${KILLS} kills of two workers among ${RUNS} runs that sleep, wait for events and approvals`, async () => {
    const log = join(root, 'effects.log');
    const spawnWorker = (): WorkerProcess => {
      const w = startWorker({ queue: redis.url, chains: join(FIXTURE, 'chains'), plugins: join(FIXTURE, 'plugins'), args: ['--stalled-interval', '1s', '--concurrency', '4'], env: { EFFECT_LOG: log } });
      workers.add(w);
      void w.exited.then(() => workers.delete(w));
      return w;
    };
    await Promise.all([spawnWorker(), spawnWorker()].map((w) => w.ready));
    const keys = Array.from({ length: RUNS }, (_, i) => `qrun-${i}`);
    const submissions = await Promise.all(keys.map((key) => submitter.submit('flow', { key }, { runId: key })));
    const results = Promise.all(submissions.map((s) => s.result()));

    const delivered = new Map<string, number>();
    let decided = 0;
    let stop = false;
    const act = (async () => {
      while (!stop) {
        const ready = new Set((await store.waits.listWaits({ kind: 'event', name: 'paid' }).catch(() => [])).map((w) => w.run_id));
        for (const key of keys) {
          if (!ready.has(key)) continue;
          const sent = await people.emit('paid', { key, amount: 10 }, { id: `pay-${key}` }).catch(() => undefined);
          for (const r of sent?.new ? sent.delivered : []) delivered.set(r, (delivered.get(r) ?? 0) + 1);
        }
        for (const request of await people.approvals.list().catch(() => [])) {
          await people.approvals.decide(request.id, { approved: true, by: 'tester' }).then(
            () => void decided++,
            () => undefined,
          );
        }
        await sleep(40);
      }
    })();

    for (let k = 0; k < KILLS; k++) {
      await sleep(150 + Math.floor(Math.random() * 350));
      const victim = [...workers][Math.floor(Math.random() * workers.size)];
      if (victim === undefined) continue;
      victim.kill('SIGKILL');
      await victim.exited;
      await spawnWorker().ready;
    }

    const done = await results;
    stop = true;
    await act;
    expect(done.map((r) => r.status)).toEqual(keys.map(() => 'succeeded'));
    const lines = readEffects(log) as unknown as { key: string; label: string; n: string }[];
    for (const [i, key] of keys.entries()) {
      const outputs = done[i]!.outputs as { a: string; b: string; amount: number; by: string };
      expect(outputs).toMatchObject({ amount: 10, by: 'tester' });
      for (const [step, label, n] of [['a', 'a', outputs.a], ['b', '10', outputs.b]] as const) {
        const calls = lines.filter((l) => l.key === `${key}:${step}` && l.label === label);
        expect(calls[calls.length - 1]?.n).toBe(n);
      }
      const waits = await store.waits.listWaits({ run_id: key });
      expect(waits.map((w) => w.key).sort()).toEqual(['nap', 'ok', 'paid']);
    }
    expect([...delivered.entries()].sort()).toEqual(keys.map((k) => [k, 1]));
    expect(decided).toBe(RUNS);
  }, 120_000);
});
