import type { Redis as RedisClient } from 'ioredis';

// BullMQ's one requirement on the server: a Redis that evicts keys when full deletes jobs and
// locks, silently. Checked at worker start; the warning says what to set.

/** A warning to print, or undefined when the policy is `noeviction` (or cannot be read: managed servers often disable CONFIG). */
export async function memoryPolicyWarning(redis: RedisClient, display: string): Promise<string | undefined> {
  let policy: string | undefined;
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch {
    return undefined;
  }
  if (policy === undefined || policy === 'noeviction') return undefined;
  return `Redis at ${display} has maxmemory-policy '${policy}': it may evict queued runs and their locks when memory runs out; set 'maxmemory-policy noeviction' (redis-cli CONFIG SET maxmemory-policy noeviction, and in redis.conf)`;
}
