// Local runs: the RunPlace of an engine without a queue. Runs execute in this process through
// DurableRuns; a run that parks on a wait is followed (the waker continues it and the caller's
// promise resolves at its end); a re-run is planned from the store here; a trigger's run is
// started here and reported once it is recorded.

import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunOptions } from '../executor/index.js';
import type { RunEvent } from '../run-model/events.js';
import type { RunResult } from '../run-model/result.js';
import type { Observer } from '../observe/index.js';
import type { ApproveCallback } from '../registry/types.js';
import { mayWait, type DurableRuns } from '../runs/durable-runs.js';
import { isRefusal, planRerun, splitRerunOptions } from '../runs/rerun.js';
import type { InternalStartOptions, RunStartOptions } from '../runs/start-options.js';
import type { Waker } from '../runs/waker.js';
import type { RunStore } from '../store/types.js';
import type { FireOutcome } from '../triggers/scheduler.js';
import type { RunPlace } from './run-place.js';

/** What the engine adds to every run it starts here: its approver, when the caller brings none, and its observer listening. */
export interface RunDefaults {
  readonly approve: ApproveCallback | undefined;
  readonly observer: Observer | undefined;
}

/** The caller's options with the engine's approver when it brings none, and the observer listening. */
export function withDefaults(d: RunDefaults, given: InternalStartOptions): InternalStartOptions {
  return observed(d.observer, given.approve === undefined && d.approve !== undefined ? { ...given, approve: d.approve } : given);
}

/** The caller's options with the observer listening too. */
export function observed<T extends RunOptions>(observer: Observer | undefined, given: T): T {
  if (!observer) return given;
  const caller = given.onEvent;
  return { ...given, onEvent: caller ? (e: RunEvent): void => (observer.onEvent(e), caller(e)) : observer.onEvent };
}

export interface LocalRunsHost {
  readonly durable: DurableRuns;
  readonly store: RunStore;
  /** Continues the runs that park, and resolves their followers at their end. */
  readonly waker: Pick<Waker, 'follow'>;
  readonly defaults: RunDefaults;
  readonly lookup: (name: string) => ChainPlan | undefined;
  readonly unknownChain: (name: string) => { code: ErrorCode; message: string };
  /** The failed result of a run that could not start (unknown chain, refused re-run). */
  readonly refuse: (chain: string, runId: string | undefined, error: { code: ErrorCode; message: string }, input: unknown, options: RunOptions) => RunResult;
  /** The engine's run ids (unique across the processes that share a store). */
  readonly newRunId: () => string;
}

export function localRuns(h: LocalRunsHost): RunPlace {
  const { durable, store, waker, defaults } = h;

  /**
   * A run that parked: awaited to its end unless the caller asked for the parked result. `given`
   * are the caller's own options (the engine's defaults are added again when the run is woken).
   */
  function followed(promise: Promise<RunResult>, given: RunStartOptions): Promise<RunResult> {
    if (given.untilWaiting === true) return promise;
    return promise.then((result) => {
      if (result.status !== 'waiting') return result;
      const follow = waker.follow(result.run_id, given);
      // The caller's signal still cancels the run while it waits: there is nothing at work to abort, so it ends cancelled.
      const signal = given.signal;
      if (signal === undefined) return follow;
      const stop = (): void => void durable.cancel(result.run_id).catch(() => undefined);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
      return follow.finally(() => signal.removeEventListener('abort', stop));
    });
  }

  return {
    // Not async: an async wrapper around the run's own promise would add a promise and two ticks per run.
    run(name, input, given) {
      const runOptions = withDefaults(defaults, given);
      const plan = h.lookup(name);
      // Only a run that may wait is followed: `followed` costs every run a promise.
      if (plan) return mayWait(plan, runOptions) ? followed(durable.start(plan, input, runOptions), given) : durable.start(plan, input, runOptions);
      // Not observed: a name that is no chain must not become a metric label.
      return Promise.resolve(h.refuse(name, given.runId, h.unknownChain(name), input, given));
    },
    async submit(name, input, given) {
      const plan = h.lookup(name);
      if (plan === undefined) {
        const { code, message } = h.unknownChain(name);
        throw new ToolchainError(code, message);
      }
      const runId = given.runId ?? h.newRunId();
      const runOptions = { ...withDefaults(defaults, given), runId };
      const done = followed(durable.start(plan, input, runOptions), given);
      return { runId, result: () => done };
    },
    resume: (runId, given) => followed(durable.resume(runId, withDefaults(defaults, given)), given),
    async rerun(runId, rerunOptions) {
      const { request, given } = splitRerunOptions(rerunOptions);
      const planned = await planRerun(store, runId, h.lookup, request);
      if (isRefusal(planned)) return h.refuse(planned.chain, given.runId, planned.error, planned.input, given);
      return followed(durable.startRerun(planned, withDefaults(defaults, given)), given);
    },
    async cancel(runId) {
      const status = (await durable.cancel(runId))?.status;
      return status === 'running' || status === 'waiting';
    },
    fire(plan, input, runId) {
      return new Promise<FireOutcome>((resolveFire) => {
        // Started is not enough: a refused input is reported as a run that started and failed, with no record.
        let started = false;
        const recorded = (): Promise<boolean> => store.getRun(runId).then((run) => run !== undefined, () => false);
        const onEvent = (e: RunEvent): void => {
          if (e.type !== 'run:started' || started) return;
          started = true;
          void recorded().then((yes) => yes && resolveFire('fired'));
        };
        // Not followed: a tick's run that parks is continued by the waker (`timers`), holding nothing here.
        const done = durable.start(plan, input, withDefaults(defaults, { runId, onEvent }));
        done.then(
          async (result) => {
            if (result.error === undefined) return resolveFire(started ? 'fired' : 'exists');
            if (result.error.code === 'RUN_IN_PROGRESS') return resolveFire('exists');
            resolveFire((await recorded()) ? (started ? 'fired' : 'exists') : { refused: `${result.error.code}: ${result.error.message}` });
          },
          (error: unknown) => resolveFire({ refused: String(error) }),
        );
      });
    },
  };
}
