// Time is injected: retry and backoff tests advance a fake clock instead of sleeping.
// The executor only ever asks for the current time and for one-shot timers; `sleep` is built on
// those two so a fake clock has a single thing to implement.

export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch (event timestamps and durations). */
  now(): number;
  /** A one-shot timer. The executor clears every timer it sets once it no longer needs it. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock. Timers are not unref'd: a CLI run waiting for a backoff must keep the process alive. */
export const systemClock: Clock = Object.freeze({
  now: Date.now,
  setTimeout: (fn: () => void, ms: number): TimerHandle => setTimeout(fn, ms),
  clearTimeout: (handle: TimerHandle): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** Resolves after `ms` on `clock`; rejects with the signal's reason if it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal!.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
