import type { Redis as RedisClient } from 'ioredis';

// Cancel across processes: the store's flag is the truth (a worker that starts
// the run later still sees it, and every owner polls it with its lease), and a Redis message on
// this channel makes a worker that runs the run now stop it within milliseconds.

export function cancelChannel(queueName: string): string {
  return `toolchain:${queueName}:cancel`;
}

export async function publishCancel(redis: RedisClient, queueName: string, runId: string): Promise<void> {
  await redis.publish(cancelChannel(queueName), runId);
}

/** Calls `onCancel(runId)` for each message; the subscription ends with the connection. */
export async function subscribeCancel(subscriber: RedisClient, queueName: string, onCancel: (runId: string) => void): Promise<void> {
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === cancelChannel(queueName)) onCancel(message);
  });
  await subscriber.subscribe(cancelChannel(queueName));
}
