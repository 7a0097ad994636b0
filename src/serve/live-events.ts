// Events as they happen, for a reader that came after (a server-wide event stream): each reader
// gets an async iterator with its own queue, fed by a listener it adds when it starts reading and
// removes when it stops. Nothing is replayed. A reader that falls behind by more than `max`
// events loses the oldest of them rather than growing without bound.

export type Listen<T> = (listener: (event: T) => void) => () => void;

export function liveEvents<T>(listen: Listen<T>, max = 10_000): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const queue: T[] = [];
      let waiting: ((r: IteratorResult<T>) => void) | undefined;
      let done = false;
      const stop = listen((event) => {
        if (done) return;
        if (waiting !== undefined) {
          const wake = waiting;
          waiting = undefined;
          wake({ value: event, done: false });
          return;
        }
        queue.push(event);
        if (queue.length > max) queue.shift();
      });
      return {
        next() {
          if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
          if (done) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => (waiting = resolve));
        },
        return() {
          done = true;
          stop();
          queue.length = 0;
          const wake = waiting;
          waiting = undefined;
          wake?.({ value: undefined, done: true });
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
