import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type RunStore, type StoredStep } from '../../src/store/index.js';
import { redisCommand, redisKeys, redisNamespace, type Namespace } from '../fixtures/store/drivers.js';
import { startPrivateRedis, type PrivateRedis } from '../fixtures/store/private-redis.js';

// What only the Redis store has: a key prefix that is refused when newer or someone else's, a
// durability that depends on the server's configuration, and a server that goes away (a private
// redis-server started for the test: the shared one on 6379 is never stopped).

const T0 = 1_700_000_000_000;
const step = (key: string): StoredStep => ({ key, step: key, index: 0, status: 'succeeded', attempts: 1, output: { key }, started_at: T0, duration_ms: 1 });

describe('Redis store prefixes', () => {
  let ns: Namespace;
  const prefix = (): string => new URL(ns.url).searchParams.get('prefix')!;
  afterEach(async () => {
    await ns.drop();
  });

  it('refuses a prefix written by a newer toolchain with STORE_TOO_NEW', async () => {
    ns = redisNamespace();
    await redisCommand('HSET', `${prefix()}meta`, 'version', '99');
    await expect(openStore(ns.url)).rejects.toMatchObject({
      code: 'STORE_TOO_NEW',
      message: `${ns.url} was written by a newer toolchain (store schema version 99; this one knows versions up to 4): upgrade toolchain, or use another store`,
    });
  });

  it('refuses a prefix whose keys belong to something else with STORE_CORRUPT', async () => {
    ns = redisNamespace();
    await redisCommand('ZADD', `${prefix()}runs`, '1', 'someone-elses');
    await expect(openStore(ns.url)).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(`is not a toolchain run store (keys under the prefix '${prefix()}' belong to something else)`) });
  });

  it('ends a prefix without a colon with one', async () => {
    ns = redisNamespace(`tc-test-plain-${process.pid}`);
    const store = await ns.open();
    await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    expect(await redisCommand('HGET', `${prefix()}:run:r`, 'status')).toBe('running');
  });
});

describe('Redis store waits', () => {
  let ns: Namespace;
  const prefix = (): string => new URL(ns.url).searchParams.get('prefix')!;
  afterEach(async () => {
    await ns.drop();
  });

  it('opens a version 1 prefix and marks it with the current version: its runs are kept, can wait and can be paused', async () => {
    ns = redisNamespace();
    await redisCommand('HSET', `${prefix()}meta`, 'version', '1');
    await redisCommand('HSET', `${prefix()}run:r`, 'id', 'r', 'chain', 'c', 'chain_hash', 'h', 'status', 'running', 'created_at', T0, 'updated_at', T0, 'owner', 'o', 'lease_until', T0, 'epoch', 1, 'cancel_requested', '0');
    const store = await ns.open();
    expect(await redisCommand('HGET', `${prefix()}meta`, 'version')).toBe('4');
    expect(await store.waits.openWait('r', 1, { id: 'w', key: 'w', kind: 'sleep', name: null, match: null, until: T0 + 5, detail: null }, T0)).toMatchObject({ run_id: 'r', until: T0 + 5 });
    expect(await store.waits.parkRun('r', 1, T0 + 5, ['w'], T0)).toBe('ok');
    expect((await store.waits.dueRuns(T0 + 5, 10)).map((r) => r.id)).toEqual(['r']);
    expect((await store.triggers.pause('c#1', { by: 'ada', at: T0 })).changed).toBe(true);
  });

  it('prune leaves no key of a pruned run, its waits or old events behind', async () => {
    ns = redisNamespace();
    const store = await ns.open();
    await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    await store.waits.openWait('r', 1, { id: 'e', key: 'e', kind: 'event', name: 'paid', match: { order: 1 }, until: T0 + 9, detail: null }, T0);
    await store.waits.openWait('r', 1, { id: 'a', key: 'a!', kind: 'approval', name: null, match: null, until: null, detail: { prompt: 'ok?' } }, T0);
    await store.waits.resolveWait('a', { ok: true, value: true, by: 'ada' }, T0 + 1);
    await store.waits.parkRun('r', 1, T0 + 9, ['e', 'a'], T0 + 2);
    await store.claimRun('r', { owner: 'o2', lease_until: T0 + 50, now: T0 + 3, expected_epoch: 1 });
    await store.finishRun('r', 2, { status: 'succeeded', outputs: {}, error: null, finished_at: T0 + 4 });
    await store.waits.recordEvent({ id: 'ev', name: 'paid', payload: { order: 1 }, at: T0 });
    expect(await store.prune(T0 + 10)).toBe(1);
    // What stays: the version and the counters that order waits and events.
    expect((await redisKeys(prefix())).sort()).toEqual([`${prefix()}event-seq`, `${prefix()}meta`, `${prefix()}wait-seq`]);
  });
});

describe('Redis store servers', () => {
  let server: PrivateRedis | undefined;
  let store: RunStore | undefined;
  afterEach(async () => {
    await store?.close();
    await server?.destroy();
    store = server = undefined;
  });

  it("refuses durability full on a server that does not sync every write, and takes one that does", async () => {
    server = await startPrivateRedis();
    await expect(openStore(server.url, { durability: 'full' })).rejects.toMatchObject({
      code: 'STORE_URL',
      message: `${server.url}: durability 'full' needs a Redis that syncs every write to disk (appendonly yes, appendfsync always); this one has appendonly no, appendfsync everysec: configure it, or use durability 'normal', PostgreSQL or SQLite`,
    });
    await server.destroy();
    server = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    store = await openStore(server.url, { durability: 'full' });
    expect((await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 })).created).toBe(true);
  });

  it('fails calls with STORE_UNAVAILABLE while the server is down, works again once it is back, and loses nothing', async () => {
    server = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    store = await openStore(server.url, { durability: 'full' });
    await store.createRun({ id: 'r', chain: 'c', chain_hash: 'h', input: {}, owner: 'o', lease_until: T0, now: T0 });
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('a'), step('b')] }])).toEqual(['ok']);
    await server.kill();
    await expect(store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }])).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(new RegExp(`^${server.url}: cannot record step results: `)),
    });
    await expect(store.getRun('r')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await server.start();
    expect(await store.recordSteps([{ run_id: 'r', epoch: 1, steps: [step('late')] }])).toEqual(['ok']);
    expect((await store.getSteps('r')).map((s) => s.key)).toEqual(['a', 'b', 'late']);
  }, 30_000);
});
