import { ToolchainError } from '../../common/errors.js';

// One attempt's bounds: the tool's timeout and the caller's signal. The work is raced against
// both, so a tool that ignores its signal still loses at the deadline (SPEC §2.7); the attempt's
// own controller is aborted either way, for tools that listen. Timers and listeners are removed
// when the race settles, so nothing keeps the process alive afterwards.

export interface Deadline {
  readonly controller: AbortController;
  /** Settles like `work`, or rejects with TIMEOUT / ABORTED first. */
  race<T>(work: Promise<T>): Promise<T>;
}

export function createDeadline(what: string, timeoutMs: number | undefined, outer: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  return {
    controller,
    race<T>(work: Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stop = (error: ToolchainError): void => {
          cleanup();
          controller.abort(error);
          reject(error);
        };
        const onAbort = (): void => stop(new ToolchainError('ABORTED', `the call to ${what} was cancelled`));
        const cleanup = (): void => {
          if (timer !== undefined) clearTimeout(timer);
          outer?.removeEventListener('abort', onAbort);
        };
        if (outer?.aborted) return onAbort();
        outer?.addEventListener('abort', onAbort, { once: true });
        if (timeoutMs !== undefined) timer = setTimeout(() => stop(new ToolchainError('TIMEOUT', `${what} timed out after ${timeoutMs} ms`)), timeoutMs);
        work.then(
          (value) => {
            cleanup();
            resolve(value);
          },
          (error: unknown) => {
            cleanup();
            reject(error as Error);
          },
        );
      });
    },
  };
}
