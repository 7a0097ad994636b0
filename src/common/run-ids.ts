import { randomUUID } from 'node:crypto';

// Run ids (SPEC §7.2 names no format): UUID-shaped, unique across processes that share a run store,
// and cheap. The first 80 random bits are drawn once per source (an engine), the last 48 count its
// runs: a random UUID per run cost more than the rest of a short run's bookkeeping.

export function runIdSource(): () => string {
  const prefix = randomUUID().slice(0, 24); // xxxxxxxx-xxxx-4xxx-yxxx-
  let count = 0;
  return () => prefix + (++count).toString(16).padStart(12, '0');
}
