import type { Clock } from '../common/clock.js';
import { emitRunBounds } from '../run-model/events.js';
import type { RunOptions } from '../executor/types.js';
import type { RunResult } from '../run-model/result.js';
import type { NewsListener } from '../queue/submit.js';

// A queued run's events, relayed to the caller's listeners as a local run emits them: one
// `run:started`, the steps' events as the worker sends them, and one `run:finished`, made from
// the result. The worker's own run:started and run:finished are not relayed as they come: a run
// parked at a distributed for_each ends on one worker and starts again on another, and the
// result the store gives is the one the caller gets.

export interface Relay {
  readonly listener: NewsListener;
  /** The run is over: its `run:finished` (after a `run:started`, if none came). */
  end(result: RunResult, input: unknown): void;
}

export function relayNews(runId: string, options: RunOptions, clock: Clock): Relay {
  let started = false;
  const emit = options.onEvent;
  return {
    listener: (news) => {
      try {
        if ('progress' in news) return options.onProgress?.(news.progress);
        const e = news.event;
        if (e.run_id === runId && (e.type === 'run:finished' || (e.type === 'run:started' && started))) return;
        if (e.run_id === runId && e.type === 'run:started') started = true;
        emit?.(e);
      } catch {
        // A listener's exception is its own problem.
      }
    },
    end(result, input) {
      if (emit !== undefined) emitRunBounds(emit, result, input, clock.now(), started);
    },
  };
}
