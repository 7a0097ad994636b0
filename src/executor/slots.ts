// The engine-wide concurrency limit, shared by every run of one engine. A plain counter with a
// FIFO of waiting runs: acquiring is synchronous when a slot is free (the common case), so a
// step never pays for a promise here. p-limit would wrap every step in a promise and a queue
// entry; the scheduler already knows when a step is ready, so it only needs the count.

export interface Slots {
  readonly limit: number;
  /** Takes a slot if one is free. */
  tryAcquire(): boolean;
  /** Calls `wake` once, holding a slot for it, when one frees up. */
  wait(wake: () => void): void;
  /** Gives a slot back, or hands it straight to the oldest waiter. */
  release(): void;
  readonly inUse: number;
}

export function createSlots(limit: number): Slots {
  if (!(limit >= 1)) throw new RangeError(`concurrency must be a number >= 1, got ${String(limit)}`);
  let inUse = 0;
  const waiters: (() => void)[] = [];
  let head = 0;
  return {
    limit,
    get inUse() {
      return inUse;
    },
    tryAcquire() {
      if (inUse >= limit || head < waiters.length) return false;
      inUse++;
      return true;
    },
    wait(wake) {
      waiters.push(wake);
    },
    release() {
      if (head < waiters.length) {
        const wake = waiters[head]!;
        waiters[head++] = undefined as unknown as () => void; // let the closure go
        if (head === waiters.length) {
          waiters.length = 0;
          head = 0;
        }
        wake(); // the slot passes to the waiter without ever being free
        return;
      }
      inUse--;
    },
  };
}
