// The engine's one way to stop waiting for work that may never finish: a tool that ignores its
// signal, a module whose top-level await hangs, a model endpoint that stops answering. The work
// is not cancelled (JavaScript cannot cancel a promise); the waiter is let go with a reason, and
// whatever the work settles with later is dropped. Timeouts, aborted signals and a stopping run
// are all just ways of calling `stop`.

export interface Race<T> {
  /** Settles like the work, unless `stop` came first: then rejects with its reason. */
  readonly promise: Promise<T>;
  /** Lets the waiter go; a no-op once the race has settled. */
  stop(reason: unknown): void;
}

export function race<T>(work: PromiseLike<T>): Race<T> {
  let settled = false;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((resolve, rejectWith) => {
    reject = rejectWith;
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        rejectWith(error);
      },
    );
  });
  return {
    promise,
    stop(reason) {
      if (settled) return;
      settled = true;
      reject(reason);
    },
  };
}

/** The work, or the signal's reason as soon as it aborts. */
export function raceSignal<T>(work: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  const r = race(work);
  const onAbort = (): void => r.stop(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const done = (): void => signal.removeEventListener('abort', onAbort);
  r.promise.then(done, done);
  return r.promise;
}

/** The work, or `error()` after `ms` (the timer is unref'd: it never keeps a process alive by itself). */
export function raceTimeout<T>(work: PromiseLike<T>, ms: number, error: () => Error): Promise<T> {
  const r = race(work);
  const timer = setTimeout(() => r.stop(error()), ms);
  timer.unref();
  const done = (): void => clearTimeout(timer);
  r.promise.then(done, done);
  return r.promise;
}
