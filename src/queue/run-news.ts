import type { Job } from 'bullmq';
import type { RunEvent, ForEachProgress } from '../run-model/events.js';

// A queued run's events, live, for whoever waits for it (the CLI's live progress for queued runs): the
// submitter marks the job `events` when it has a listener, and the worker that executes the run
// passes each event on as the job's progress, which BullMQ's queue events deliver in order to
// every submitting process. A run nobody listens to sends nothing. What travels is JSON: an
// event whose text is larger than NEWS_LIMIT travels without its data (a step's output, the run's
// input or outputs), which the run store has anyway.

/** One item of news: an event, or how far a for_each step has come. */
export type RunNews = { readonly event: RunEvent } | { readonly progress: ForEachProgress };

const NEWS_LIMIT = 64 * 1024;

/** What a worker gives the engine for a job whose submitter listens. */
export function newsReporter(job: Pick<Job, 'updateProgress'>): { onEvent: (e: RunEvent) => void; onProgress: (p: ForEachProgress) => void } {
  // Sent without waiting: one connection keeps them in order, and a lost item must not stop the run.
  const send = (news: RunNews): void => void job.updateProgress(news as unknown as object).catch(() => undefined);
  return {
    onEvent: (event) => send({ event: withinLimit(event) }),
    onProgress: (progress) => send({ progress }),
  };
}

function withinLimit(event: RunEvent): RunEvent {
  let size: number;
  try {
    size = JSON.stringify(event).length;
  } catch {
    size = Infinity;
  }
  if (size <= NEWS_LIMIT) return event;
  const { output: _o, outputs: _s, input: _i, ...rest } = event as RunEvent & { output?: unknown; outputs?: unknown; input?: unknown };
  return rest as RunEvent;
}

/** News as a submitter reads it off the queue's events: anything else (another version's, a number) is not news. */
export function readNews(data: unknown): RunNews | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as { event?: { type?: unknown }; progress?: { step?: unknown } };
  if (typeof d.event?.type === 'string') return { event: d.event as RunEvent };
  if (typeof d.progress?.step === 'string') return { progress: d.progress as ForEachProgress };
  return undefined;
}
