// `circuit_breaker: { failures, reset_after }`: after `failures` consecutive failures the circuit
// opens and calls fail fast; once `reset_after` has passed one trial call goes through
// (half-open): success closes the circuit, failure opens it for another `reset_after`. All
// transitions happen here; time comes from the injected clock.

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreaker {
  /** The state now (an open circuit whose wait is over reads as half-open). */
  state(): CircuitState;
  /** May a call go through? Claims the single trial slot when half-open. */
  tryPass(): boolean;
  onSuccess(): void;
  onFailure(): void;
  /** A call ended without saying anything about the tool (cancelled): free the trial slot. */
  release(): void;
}

export interface BreakerSettings {
  readonly failures: number;
  readonly resetAfterMs: number;
  readonly now: () => number;
}

export function createCircuitBreaker({ failures, resetAfterMs, now }: BreakerSettings): CircuitBreaker {
  let consecutive = 0;
  let openedAt: number | undefined;
  let trialInFlight = false;

  const state = (): CircuitState => {
    if (openedAt === undefined) return 'closed';
    return now() - openedAt >= resetAfterMs ? 'half-open' : 'open';
  };

  return {
    state,
    tryPass() {
      const current = state();
      if (current === 'closed') return true;
      if (current === 'open' || trialInFlight) return false;
      trialInFlight = true;
      return true;
    },
    onSuccess() {
      consecutive = 0;
      openedAt = undefined;
      trialInFlight = false;
    },
    onFailure() {
      consecutive += 1;
      // A failed trial re-opens at once; a closed circuit opens at the threshold.
      if (trialInFlight || openedAt !== undefined || consecutive >= failures) openedAt = now();
      trialInFlight = false;
    },
    release() {
      trialInFlight = false;
    },
  };
}
