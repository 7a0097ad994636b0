import type { Redis as RedisClient } from 'ioredis';
import { ToolchainError } from '../common/errors.js';
import { importOptional } from '../common/optional-package.js';
import { CANCEL, CLAIM, CREATE, FINISH, PRUNE, RECORD, RENEW, STEPS, type Script } from './redis-scripts.js';
import { runFromFields, runFromHash } from './redis-run.js';
import { RedisTriggerControls } from './redis-trigger-controls.js';
import { RedisWaits, type RedisAccess } from './redis-waits.js';
import { CorruptRunError, corruptRun, decodeListed, jsonText, listLimit, newStoredRun } from './run-codec.js';
import { encodeStep, MissingBlobError, parseSteps, withBlobs } from './step-codec.js';
import { isOwnError, storeError, tooNew } from './store-error.js';
import { badUrl, redact, takeOption } from './store-url.js';
import type { Claim, ClaimOutcome, CreateOutcome, NewRun, RunEnd, RunFilter, RunStore, StepBatch, StoreOptions, StoredRun, StoredStep } from './types.js';
import type { StoredEvent, StoredWait, WaitFilter, WaitOutcome, WaitRequest } from './wait-types.js';

// `redis://…` — the store next to a BullMQ queue (the same Redis). Every write is one Lua script
// (redis-scripts.ts), so it is atomic and one round trip. The client neither queues commands
// while disconnected nor resends them after a reconnection: a script that may or may not have run
// is reported (STORE_UNAVAILABLE) rather than run twice.
//
// Durability is the server's: `normal` needs nothing from it (a crash of the engine's process
// loses nothing Redis acknowledged); `full` needs `appendonly yes` and `appendfsync always`, and
// opening refuses a server that says otherwise (one that does not answer CONFIG GET is taken at
// its word).

/**
 * 2: runs that wait (their keys are made as they are used: a version 1 store needs nothing to
 * become 2). 3: paused triggers (a toolchain that knows only version 2 would fire triggers people
 * paused). 4: events in the order they were recorded (`event-log`), which processes read to learn
 * of events recorded elsewhere; events an older toolchain records would be missing from it, so the
 * version keeps such a toolchain out.
 */
const VERSION = 4;
const PRUNE_CHUNK = 200;
/** Ids read at once from an index while listing one queue's runs (no index has the queue). */
const LIST_CHUNK = 500;
const RECONNECT_WAIT_MS = 2_000;

export async function openRedisStore(url: URL, options: StoreOptions): Promise<RunStore> {
  const display = redact(url);
  const given = takeOption(url, 'prefix', display) ?? 'toolchain';
  if (given === '' || given === ':') throw badUrl(display, '?prefix= needs a value, as in ?prefix=myapp');
  const prefix = given.endsWith(':') ? given : `${given}:`;
  const { default: Redis } = await importOptional<{ default: typeof import('ioredis').default }>('ioredis');
  let opened = false;
  let lastError: unknown;
  const redis = new Redis(url.href, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 5_000,
    // Once open, reconnect for ever (calls fail meanwhile); while opening, report the first failure.
    retryStrategy: (times) => (opened ? Math.min(times * 100, 1_000) : null),
  });
  redis.on('error', (error: unknown) => {
    lastError = error; // reported by the call that fails; without a listener ioredis logs it
  });
  try {
    await redis.connect();
    await prepare(redis, prefix, display, options);
  } catch (error) {
    redis.disconnect();
    throw isOwnError(error) ? error : mapRedisError(display, 'cannot open it', lastError ?? error, 'read');
  }
  opened = true;
  return new RedisStore(redis, display, prefix);
}

async function prepare(redis: RedisClient, p: string, url: string, options: StoreOptions): Promise<void> {
  const version = Number((await redis.hget(`${p}meta`, 'version')) ?? 0);
  if (version > VERSION) throw tooNew(url, version, VERSION);
  if (version === 0 && (await hasKeysUnder(redis, p))) {
    throw new ToolchainError('STORE_CORRUPT', `${url} is not a toolchain run store (keys under the prefix '${p}' belong to something else); choose another with ?prefix=P`);
  }
  // No version needs setting up: a run's keys are made when it is created, a wait's when it is
  // opened, the event log's when an event is recorded. The version keeps out a toolchain that
  // knows only version 1, whose prune would leave the waits of the runs it deletes behind, or
  // version 2, whose events would not be in the log.
  // A write: a read-only replica or a user without write rights refuses it (STORE_WRITE_FAILED).
  if (version < VERSION) await redis.hset(`${p}meta`, 'version', String(VERSION)).catch((error: unknown) => Promise.reject(mapRedisError(url, 'cannot set it up', error, 'write')));
  if (options.durability === 'full') await checkFsync(redis, url);
}

/** Whether any key starts with the prefix: a store not yet versioned that holds keys holds someone else's. */
async function hasKeysUnder(redis: RedisClient, p: string): Promise<boolean> {
  const pattern = `${p.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    // `meta` without a version is not ours either (ours gets its version before anything else).
    if (keys.length > 0) return true;
    cursor = next;
  } while (cursor !== '0');
  return false;
}

async function checkFsync(redis: RedisClient, url: string): Promise<void> {
  let config: string[];
  try {
    config = [...((await redis.config('GET', 'appendonly')) as string[]), ...((await redis.config('GET', 'appendfsync')) as string[])];
  } catch {
    return; // CONFIG is often disabled on managed servers: nothing to check against
  }
  const appendonly = config[config.indexOf('appendonly') + 1];
  const appendfsync = config[config.indexOf('appendfsync') + 1];
  if (appendonly !== 'yes' || appendfsync !== 'always') {
    throw new ToolchainError(
      'STORE_URL',
      `${url}: durability 'full' needs a Redis that syncs every write to disk (appendonly yes, appendfsync always); this one has appendonly ${appendonly}, appendfsync ${appendfsync}: configure it, or use durability 'normal', PostgreSQL or SQLite`,
    );
  }
}

function mapRedisError(url: string, doing: string, error: unknown, op: 'read' | 'write'): Error {
  if (isOwnError(error)) return error;
  if (error instanceof CorruptRunError) return corruptRun(url, error);
  if (error instanceof MissingBlobError) return storeError('STORE_CORRUPT', url, doing, error);
  // A reply of the server (OOM, READONLY, MISCONF: it refuses writes) versus no answer at all.
  const reply = error instanceof Error && error.name === 'ReplyError';
  const down = !reply || /^(NOAUTH|WRONGPASS|LOADING|MASTERDOWN|BUSY)/.test(error.message);
  return storeError(!down && op === 'write' ? 'STORE_WRITE_FAILED' : 'STORE_UNAVAILABLE', url, doing, error);
}

class RedisStore implements RunStore {
  readonly waits: RedisWaits;
  readonly triggers: RedisTriggerControls;

  constructor(
    private readonly redis: RedisClient,
    readonly url: string,
    private readonly prefix: string,
  ) {
    const access: RedisAccess = { eval: (doing, op, script, args) => this.eval(doing, op, script, args), command: (doing, fn) => this.command(doing, fn) };
    this.waits = new RedisWaits(prefix, access);
    this.triggers = new RedisTriggerControls(prefix, access);
  }

  /**
   * Waits a moment for a connection that is being made again (the server restarted, a network
   * blip); a longer outage fails the call with STORE_UNAVAILABLE instead of queueing it.
   */
  private async connected(): Promise<void> {
    if (this.redis.status === 'ready') return;
    if (this.redis.status === 'end') throw new Error('the store is closed');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', ready);
        reject(new Error(`not connected (${this.redis.status})`));
      }, RECONNECT_WAIT_MS);
      const ready = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', ready);
    });
  }

  private async eval<T>(doing: string, op: 'read' | 'write', script: Script, args: readonly (string | number)[]): Promise<T> {
    try {
      await this.connected();
      try {
        return (await this.redis.call('EVALSHA', [script.sha, 0, this.prefix, ...args])) as T;
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return (await this.redis.call('EVAL', [script.lua, 0, this.prefix, ...args])) as T;
      }
    } catch (error) {
      throw mapRedisError(this.url, doing, error, op);
    }
  }

  private async command<T>(doing: string, fn: (redis: RedisClient) => Promise<T>): Promise<T> {
    try {
      await this.connected();
      return await fn(this.redis);
    } catch (error) {
      throw mapRedisError(this.url, doing, error, 'read');
    }
  }

  async createRun(run: NewRun): Promise<CreateOutcome> {
    const fields: (string | number)[] = ['id', run.id, 'chain', run.chain, 'chain_hash', run.chain_hash, 'status', 'running'];
    const input = jsonText(run.input);
    if (input !== null) fields.push('input', input);
    fields.push('created_at', run.now, 'updated_at', run.now, 'owner', run.owner, 'lease_until', run.lease_until, 'epoch', 1, 'cancel_requested', '0');
    if (run.queue !== undefined) fields.push('queue', run.queue);
    if (run.rerun_of !== undefined) fields.push('rerun_of', run.rerun_of);
    if (run.rerun_from !== undefined) fields.push('rerun_from', run.rerun_from);
    const answer = await this.eval<string[]>(`cannot create run ${run.id}`, 'write', CREATE, [run.id, run.now, run.chain, ...fields]);
    if (answer[0] === '1') return { created: true, run: newStoredRun(run) };
    return { created: false, run: runFromFields(answer, 1)! };
  }

  async claimRun(id: string, claim: Claim): Promise<ClaimOutcome> {
    const answer = await this.eval<string[]>(`cannot claim run ${id}`, 'write', CLAIM, [id, claim.expected_epoch, claim.owner, claim.lease_until, claim.now, claim.queue ?? '']);
    const run = runFromFields(answer, 1);
    return answer[0] === '1' && run ? { claimed: true, run } : { claimed: false, run };
  }

  async recordSteps(batches: readonly StepBatch[]): Promise<readonly ('ok' | 'fenced')[]> {
    const doing = 'cannot record step results';
    const args: (string | number)[] = [];
    try {
      for (const batch of batches) {
        args.push(batch.run_id, batch.epoch, batch.steps.length);
        for (const step of batch.steps) {
          const encoded = encodeStep(step);
          args.push(encoded.key, encoded.status, encoded.json, encoded.blob?.hash ?? '', encoded.blob?.json ?? '');
        }
      }
    } catch (error) {
      throw storeError('STORE_WRITE_FAILED', this.url, doing, error); // an output JSON cannot carry
    }
    const answer = await this.eval<number[]>(doing, 'write', RECORD, args);
    const results = answer.map((ok): 'ok' | 'fenced' => (ok === 1 ? 'ok' : 'fenced'));
    // A run's end goes after its steps (a script of its own: one more round trip, as before).
    await Promise.all(
      batches.map(async (batch, i) => {
        if (batch.end !== undefined && results[i] === 'ok') results[i] = await this.finishRun(batch.run_id, batch.epoch, batch.end);
      }),
    );
    return results;
  }

  async finishRun(id: string, epoch: number, end: RunEnd): Promise<'ok' | 'fenced'> {
    const args = [id, epoch, end.status, end.finished_at, jsonText(end.outputs ?? null) ?? '', jsonText(end.error ?? null) ?? ''];
    return (await this.eval<number>(`cannot finish run ${id}`, 'write', FINISH, args)) === 1 ? 'ok' : 'fenced';
  }

  async renewLease(id: string, epoch: number, leaseUntil: number, now: number): Promise<{ result: 'ok' | 'fenced'; cancel_requested: boolean }> {
    const [ok, cancel] = await this.eval<[number, number]>(`cannot renew the lease of run ${id}`, 'write', RENEW, [id, epoch, leaseUntil, now]);
    return { result: ok === 1 ? 'ok' : 'fenced', cancel_requested: cancel === 1 };
  }

  async requestCancel(id: string, now: number): Promise<StoredRun | undefined> {
    return runFromFields(await this.eval<string[]>(`cannot cancel run ${id}`, 'write', CANCEL, [id, now]));
  }

  async getRun(id: string): Promise<StoredRun | undefined> {
    const hash = await this.command(`cannot read run ${id}`, (r) => r.hgetall(`${this.prefix}run:${id}`));
    return runFromHash(new Map(Object.entries(hash)));
  }

  async getSteps(id: string): Promise<readonly StoredStep[]> {
    const doing = `cannot read the steps of run ${id}`;
    const texts = await this.eval<(string | null)[]>(doing, 'read', STEPS, [id]);
    const parsed = parseSteps(texts.filter((t): t is string => t !== null));
    const found = new Map<string, string>();
    if (parsed.blobs.length > 0) {
      const values = await this.command(doing, (r) => r.mget(parsed.blobs.map((h) => `${this.prefix}blob:${h}`)));
      parsed.blobs.forEach((h, i) => {
        const value = values[i];
        if (value !== null && value !== undefined) found.set(h, value);
      });
      // A run pruned between the two reads has no steps any more, rather than a damaged one.
      if (found.size < parsed.blobs.length && !(await this.getRun(id))) return [];
    }
    try {
      return withBlobs(parsed, found);
    } catch (error) {
      throw mapRedisError(this.url, doing, error, 'read');
    }
  }

  async listRuns(filter: RunFilter = {}): Promise<readonly StoredRun[]> {
    const limit = listLimit(filter.limit);
    const p = this.prefix;
    const { status, chain } = filter;
    const index =
      status !== undefined && chain !== undefined
        ? `${p}status-chain:${status}:${chain}`
        : status !== undefined
          ? `${p}status:${status}`
          : chain !== undefined
            ? `${p}chain:${chain}`
            : `${p}runs`;
    const read = async (r: RedisClient, ids: readonly string[]): Promise<StoredRun[]> => {
      if (ids.length === 0) return [];
      const pipeline = r.pipeline();
      for (const id of ids) pipeline.hgetall(`${p}run:${id}`);
      const answers = (await pipeline.exec()) ?? [];
      for (const [error] of answers) if (error) throw error;
      // A run pruned since the index was read decodes to undefined and is left out.
      return decodeListed(answers, ([, hash]) => runFromHash(new Map(Object.entries(hash as Record<string, string>))), filter, this.url);
    };
    return this.command('cannot list runs', async (r) => {
      // A run's re-runs have an index of their own; they are few, and the other filters apply to them here.
      if (filter.rerun_of !== undefined) {
        const runs = await read(r, await r.zrevrange(`${p}reruns:${filter.rerun_of}`, 0, -1));
        const keep = (run: StoredRun): boolean => (status === undefined || run.status === status) && (chain === undefined || run.chain === chain) && (filter.queue === undefined || run.queue === filter.queue);
        return runs.filter(keep).slice(0, limit);
      }
      if (filter.queue === undefined) return read(r, await r.zrevrange(index, 0, limit - 1));
      // One queue's runs: read through the index newest first, keeping that queue's.
      // (A run added meanwhile shifts the pages: one seen twice is kept once.)
      const runs = new Map<string, StoredRun>();
      for (let from = 0; runs.size < limit; from += LIST_CHUNK) {
        const ids = await r.zrevrange(index, from, from + LIST_CHUNK - 1);
        for (const run of await read(r, ids)) if (run.queue === filter.queue && runs.size < limit) runs.set(run.id, run);
        if (ids.length < LIST_CHUNK) break;
      }
      return [...runs.values()];
    });
  }

  async prune(finishedBefore: number): Promise<number> {
    let total = 0;
    for (;;) {
      // In chunks, so that Redis is never held long by one script.
      const count = await this.eval<number>('cannot prune runs', 'write', PRUNE, [finishedBefore, PRUNE_CHUNK]);
      total += count;
      if (count < PRUNE_CHUNK) break;
    }
    await this.waits.pruneEvents(finishedBefore);
    return total;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
