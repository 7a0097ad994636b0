import { randomUUID } from 'node:crypto';

// Run ids: UUID-shaped, unique across processes that share a run store,
// and cheap. The first 80 random bits are drawn once per source (an engine), the last 48 count its
// runs: a random UUID per run cost more than the rest of a short run's bookkeeping. The count's
// last three hex digits come from a table and the rest is rebuilt once every 4,096 runs, so a run
// id costs one concatenation (toString(16) and padStart were 4% of a one-step run).

const HEX3 = Array.from({ length: 4096 }, (_, i) => i.toString(16).padStart(3, '0'));

export function runIdSource(): () => string {
  const prefix = randomUUID().slice(0, 24); // xxxxxxxx-xxxx-4xxx-yxxx-
  let count = 0;
  let upper = '';
  return () => {
    const low = ++count & 0xfff;
    if (low === 0 || count === 1) upper = prefix + Math.floor(count / 4096).toString(16).padStart(9, '0');
    return upper + HEX3[low]!;
  };
}
