import type { RunEvent } from '../run-model/events.js';

// One run's events for anyone who asks: every past event, then the live ones, ending after the
// run's own `run:finished`. Each reader gets an async iterator with its own queue, so a slow
// reader (an SSE client on a bad link) never holds up the run or the other readers; it only
// grows its own queue, which the run's end bounds.

export class EventFeed {
  private readonly events: RunEvent[] = [];
  private readonly readers = new Set<Reader>();
  private ended = false;

  constructor(private readonly runId: string) {}

  push(event: RunEvent): void {
    if (this.ended) return;
    this.events.push(event);
    for (const reader of this.readers) reader.offer(event);
    if (event.type === 'run:finished' && event.run_id === this.runId) {
      this.ended = true;
      for (const reader of this.readers) reader.end();
      this.readers.clear();
    }
  }

  /** No more events will come here (the run is left to the store): readers end after what they have. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const reader of this.readers) reader.end();
    this.readers.clear();
  }

  read(): AsyncIterable<RunEvent> {
    return {
      [Symbol.asyncIterator]: () => {
        const reader = new Reader(() => this.readers.delete(reader));
        // Replay and subscribe in one synchronous step: no event can fall between the two.
        for (const e of this.events) reader.offer(e);
        if (this.ended) reader.end();
        else this.readers.add(reader);
        return reader;
      },
    };
  }
}

class Reader implements AsyncIterator<RunEvent> {
  private readonly queue: RunEvent[] = [];
  private head = 0;
  private done = false;
  private waiting: ((r: IteratorResult<RunEvent>) => void) | undefined;

  constructor(private readonly unsubscribe: () => void) {}

  offer(event: RunEvent): void {
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = undefined;
      wake({ value: event, done: false });
    } else this.queue.push(event);
  }

  end(): void {
    this.done = true;
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = undefined;
      wake({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<RunEvent>> {
    if (this.head < this.queue.length) {
      const value = this.queue[this.head++]!;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<RunEvent>> {
    this.unsubscribe();
    this.done = true;
    this.queue.length = 0;
    this.head = 0;
    return Promise.resolve({ value: undefined, done: true });
  }
}
