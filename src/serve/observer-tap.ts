import type { RunEvent } from '../run-model/events.js';
import type { Observer } from '../observe/observe.js';

// What the engine's own runs say, for the server too. A run the server starts sends its events to
// the listener it was started with; but a run that waited is woken later by the engine's waker,
// which has only the engine's observer to tell — as does a decision on an approval request. An
// observer made with `tapObserver` passes every event on to the observer it wraps and then to
// whoever listens: `toolchain serve` gives it to its engine, and the server's run service listens,
// so a woken run's events and its end reach the run's view and its event stream.

export type EventListener = (event: RunEvent) => void;

export interface TappedObserver extends Observer {
  /** Every event the engine's observer sees, from now on; returns a function that stops listening. */
  listen(listener: EventListener): () => void;
}

const TAPPED = Symbol('toolchain.tapped-observer');

export function tapObserver(observer: Observer): TappedObserver {
  const listeners = new Set<EventListener>();
  const inner = observer.onEvent;
  const tapped: TappedObserver & { [TAPPED]: true } = {
    ...observer,
    onEvent(event) {
      inner(event);
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // a listener's exception is its own problem; the run goes on
        }
      }
    },
    listen(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    [TAPPED]: true,
  };
  return tapped;
}

/** The tap of an engine's observer, when it has one. */
export function tapOf(observer: Observer | undefined): TappedObserver | undefined {
  return observer !== undefined && (observer as Partial<{ [TAPPED]: true }>)[TAPPED] === true ? (observer as TappedObserver) : undefined;
}
