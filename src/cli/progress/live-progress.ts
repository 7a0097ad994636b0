import type { ForEachProgress, RunEvent } from '../../run-model/events.js';
import type { RunResult } from '../../run-model/result.js';
import { ProgressState, summaryLine } from './progress-state.js';

// The live progress block on a terminal (stderr), redrawn in place by log-update, which wraps
// lines to the terminal's width so that a long line never makes redraws pile up. A timer keeps
// running steps' elapsed time current; `pause` takes the block away while something else (the
// approval prompt) owns the terminal, and draws it once afterwards; `done` leaves the final block
// and one summary line.

export interface LiveProgress {
  onEvent(e: RunEvent): void;
  /** A for_each's `done/total`; shown at the next tick (elements may finish thousands a second). */
  onProgress(p: ForEachProgress): void;
  pause<T>(work: () => Promise<T>): Promise<T>;
  /** Prints lines above the block (a tool's ctx.log with --verbose). */
  log(text: string): void;
  done(result: RunResult | undefined): void;
}

const TICK_MS = 250;

export async function createLiveProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): Promise<LiveProgress> {
  // Loaded only here: log-update's dependencies build a Unicode emoji pattern and an
  // Intl.Segmenter as they load (≈18 ms of every CLI start), and most runs draw on no terminal.
  const { createLogUpdate } = await import('log-update');
  const draw = createLogUpdate(stream, { showCursor: true });
  const state = new ProgressState();
  let paused = 0;
  let timer: NodeJS.Timeout | undefined;
  const render = (): void => {
    if (paused === 0) draw(state.text(now()));
  };
  const tick = (): void => {
    if (state.busy && timer === undefined) {
      timer = setInterval(render, TICK_MS);
      // The timer must never keep the process alive.
      timer.unref();
    } else if (!state.busy && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return {
    onEvent(e) {
      if (!state.apply(e, now())) return;
      render();
      tick();
    },
    onProgress(p) {
      state.progress(p);
    },
    async pause(work) {
      if (paused++ === 0) draw.clear();
      try {
        return await work();
      } finally {
        if (--paused === 0) render();
      }
    },
    log(text) {
      if (paused === 0) draw.clear();
      stream.write(text.endsWith('\n') ? text : `${text}\n`);
      render();
    },
    done(result) {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      render();
      draw.done();
      if (result) stream.write(`${summaryLine(result)}\n`);
    },
  };
}
