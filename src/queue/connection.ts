import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { ToolchainError } from '../common/errors.js';
import { importOptional } from '../common/optional-package.js';
import { redact } from '../store/store-url.js';

// The queue's address: `redis://HOST:PORT[/DB][?queue=NAME]`. BullMQ and ioredis are
// imported when a queue is first opened, so that a library user who never uses one loads neither.
//
// Two kinds of connection, as BullMQ asks: a worker's waits for ever on a lost Redis
// (`maxRetriesPerRequest: null`: its blocking reads must not fail while Redis restarts), a
// producer's fails at once (`enableOfflineQueue: false`: a submit to a Redis that is down is
// reported to the caller, not queued in the process's memory).

export const QUEUE_URL_FORMS = 'redis://HOST:PORT[/DB][?queue=NAME] or rediss://…';

export interface QueueAddress {
  /** The Redis URL without the queue's own options. */
  readonly redis: string;
  /** The BullMQ queue's name (default `toolchain`). */
  readonly name: string;
  /** For messages: no password. */
  readonly display: string;
}

export function parseQueueUrl(url: string): QueueAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badQueueUrl(url, 'not a valid URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw badQueueUrl(url, `a queue lives in Redis, not '${parsed.protocol}'`);
  const names = parsed.searchParams.getAll('queue');
  if (names.length > 1) throw badQueueUrl(url, `?queue= given ${names.length} times`);
  const name = names[0] ?? 'toolchain';
  // BullMQ joins its keys with ':'; a name with one would read as two parts.
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) throw badQueueUrl(url, `the queue name '${name}' may hold only letters, digits, '_', '.' and '-'`);
  parsed.searchParams.delete('queue');
  return { redis: parsed.href, name, display: redact(url) };
}

function badQueueUrl(url: string, why: string): ToolchainError {
  return new ToolchainError('QUEUE_URL', `queue '${redact(url)}': ${why}; expected ${QUEUE_URL_FORMS}`);
}

type RedisCtor = new (url: string, options: RedisOptions) => RedisClient;

async function redisClass(): Promise<RedisCtor> {
  return (await importOptional<{ default: RedisCtor }>('ioredis')).default;
}

/** For a worker (and its blocking reads): waits for a lost Redis instead of failing. */
export async function workerConnection(address: QueueAddress): Promise<RedisClient> {
  const Redis = await redisClass();
  const redis = new Redis(address.redis, { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 100, 1_000) });
  redis.on('error', () => undefined); // reconnects by itself; without a listener ioredis prints every failure
  return redis;
}

/** For a producer: a call while Redis is away fails at once. */
export async function producerConnection(address: QueueAddress): Promise<RedisClient> {
  const Redis = await redisClass();
  const redis = new Redis(address.redis, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: (times) => Math.min(times * 100, 1_000) });
  redis.on('error', () => undefined); // a failed call reports it
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw unavailable(address, error);
  }
  return redis;
}

export function unavailable(address: QueueAddress, error: unknown): ToolchainError {
  if (error instanceof ToolchainError) return error;
  return new ToolchainError('QUEUE_UNAVAILABLE', `the queue ${address.display} cannot be reached: ${(error as Error)?.message ?? String(error)}; start Redis, or check --queue`);
}

/**
 * A run store that could not be opened on the queue's own Redis (the store's default with a
 * queue): the queue is what the user named, so that is what cannot be reached.
 */
export function queueStoreFailure(address: QueueAddress, error: unknown): unknown {
  if (!(error instanceof ToolchainError) || error.code !== 'STORE_UNAVAILABLE') return error;
  return new ToolchainError('QUEUE_UNAVAILABLE', `the queue ${address.display} cannot be reached (its Redis is the run store too): ${error.message}; start Redis, or check --queue`);
}

export type BullMQ = typeof import('bullmq');

export function importBullMQ(): Promise<BullMQ> {
  return importOptional<BullMQ>('bullmq');
}
