import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEffects, sleep, until, useQueueCluster, type WorkerProcess } from '../helpers/queue-cluster.js';

// The queue with crashes: three worker processes share 300 runs of a five-step chain; one worker is
// killed with SIGKILL twice (a fresh one started after the first kill). Every run succeeds with
// the right outputs; the steps that ran twice are few (at most kills × a worker's steps in
// flight) and each ran first in a killed process, before its result was recorded.

const CONCURRENCY = 8;
const cluster = useQueueCluster('queue-kill', { perTest: false });

describe('workers killed mid-way', () => {
  it('300 runs over 3 workers, one SIGKILLed twice: all succeed, re-execution bounded, nothing recorded runs again', async () => {
    const log = join(cluster.root, 'effects.log');
    const spawnWorker = (): WorkerProcess => cluster.spawn(['--concurrency', String(CONCURRENCY)], { EFFECT_LOG: log });
    const first = [spawnWorker(), spawnWorker(), spawnWorker()];
    await Promise.all(first.map((w) => w.ready));
    const submissions = await Promise.all(Array.from({ length: 300 }, (_, i) => cluster.engine.submit('five', { start: i, ms: 40 }, { runId: `kill-${i}` })));
    const results = Promise.all(submissions.map((s) => s.result()));

    const killed = new Set<number>();
    await until('a third of the steps', () => readEffects(log).length > 500);
    first[0]!.kill('SIGKILL');
    killed.add(first[0]!.pid);
    const replacement = spawnWorker();
    await replacement.ready;
    await until('the replacement at work', () => readEffects(log).some((e) => e.pid === replacement.pid));
    await sleep(300);
    replacement.kill('SIGKILL');
    killed.add(replacement.pid);

    const done = await results;
    expect(done.map((r) => r.status)).toEqual(done.map(() => 'succeeded'));
    expect(done.map((r) => r.outputs)).toEqual(done.map((_, i) => ({ value: i + 5 })));

    const effects = readEffects(log);
    const byKey = new Map<string, number[]>();
    for (const e of effects) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e.pid]);
    expect(byKey.size).toBe(1500);
    const again = effects.length - 1500;
    expect(again).toBeLessThanOrEqual(killed.size * CONCURRENCY);
    // A step that ran more than once ran every time but the last in a killed worker: a surviving
    // worker never executed a step whose result was already recorded.
    for (const pids of byKey.values()) for (const pid of pids.slice(0, -1)) expect(killed.has(pid)).toBe(true);
    // Every worker took part; the killed ones really died mid-way.
    expect(new Set(effects.map((e) => e.pid)).size).toBe(4);
  }, 90_000);
});
