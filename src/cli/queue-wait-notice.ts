import type { RunEvent } from '../run-model/events.js';
import { printable } from '../common/printable.js';

// `run --queue` and `resume --queue` wait for a worker, which may be none at all: once the run
// has waited WAIT_MS without a worker taking it (no event of it came back), one line says so,
// so that a silent terminal is not taken for a hang.

const WAIT_MS = 3_000;

export interface WaitNotice {
  /** Hears the run's events: the first one means a worker has it. */
  readonly onEvent: (event: RunEvent) => void;
  readonly stop: () => void;
}

/** `show` writes the line (above the progress block, on a terminal). */
export function queueWaitNotice(queue: string, show: (line: string) => void, waitMs = WAIT_MS): WaitNotice {
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
    timer = undefined;
    show(printable(`queued; waiting for a worker on ${queue} (start one with 'toolchain worker --queue URL')`));
  }, waitMs);
  timer.unref();
  const stop = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return { onEvent: stop, stop };
}
