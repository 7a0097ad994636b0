// Queued runs: the RunPlace of an engine made with `queue`, which executes nothing itself: `run`
// records the run, enqueues it and resolves with the RunResult the store has once a worker
// finished it; `submit` returns as soon as the run is enqueued. A run that cannot be submitted
// (Redis down, a bad run id) is a failed result, as a run that cannot start is in a local engine.
// A re-run is planned here from the store (what it keeps), recorded with what it keeps, and
// executed by a worker.

import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunResult } from '../run-model/result.js';
import type { Clock } from '../common/clock.js';
import type { NewsListener, QueueSubmitter, Submission } from '../queue/submit.js';
import { relayNews } from './queue-relay.js';
import { isRefusal, planRerun, splitRerunOptions } from '../runs/rerun.js';
import type { RunStartOptions } from '../runs/start-options.js';
import type { RunStore } from '../store/types.js';
import type { RunPlace } from './run-place.js';

export interface QueuedRunsHost {
  readonly submitter: QueueSubmitter;
  /** The run store the queue's workers share: a re-run is planned from it. */
  readonly store: RunStore;
  readonly lookup: (name: string) => ChainPlan | undefined;
  /** The failed result of a run that could not start (unknown chain, queue unreachable). */
  readonly refuse: (chain: string, runId: string | undefined, error: { code: ErrorCode; message: string }, input: unknown, options: RunStartOptions) => RunResult;
  readonly unknownChain: (name: string) => { code: ErrorCode; message: string };
  /** The engine's run ids (unique across the processes that share a store). */
  readonly newRunId: () => string;
  readonly clock: Clock;
}

export function queuedRuns(h: QueuedRunsHost): RunPlace {
  const failed = (chain: string, runId: string, error: unknown, input: unknown, options: RunStartOptions): RunResult => {
    if (!(error instanceof ToolchainError)) throw error;
    return h.refuse(chain, runId, { code: error.code, message: error.message }, input, options);
  };

  /** Submits, and waits for the result; the run's events reach the caller's listeners as the worker sends them (queue-relay.ts). */
  async function relayed(runId: string, input: unknown, options: RunStartOptions, send: (follow?: NewsListener) => Promise<Submission>, chain: string): Promise<RunResult> {
    const relay = options.onEvent !== undefined || options.onProgress !== undefined ? relayNews(runId, options, h.clock) : undefined;
    try {
      const result = await (await send(relay?.listener)).result(options.signal);
      relay?.end(result, input);
      return result;
    } catch (error) {
      return failed(chain, runId, error, input, options);
    } finally {
      if (relay !== undefined) h.submitter.unfollow(runId, relay.listener);
    }
  }

  /** The chain to submit; CHAIN_NOT_FOUND (with the closest name) when there is none. */
  function planNamed(name: string): ChainPlan {
    const plan = h.lookup(name);
    if (plan !== undefined) return plan;
    const { code, message } = h.unknownChain(name);
    throw new ToolchainError(code, message);
  }

  const submit = async (name: string, input: unknown, options: RunStartOptions): Promise<Submission> => h.submitter.submit(planNamed(name), input, options.runId ?? h.newRunId());
  return {
    submit,
    run(name, input, options) {
      const runId = options.runId ?? h.newRunId();
      return relayed(runId, input, options, (follow) => h.submitter.submit(planNamed(name), input, runId, follow), name);
    },
    resume: (runId, options) => relayed(runId, undefined, options, (follow) => h.submitter.resume(runId, options.allowChanged === true, follow), '(unknown)'),
    async rerun(originId, options) {
      const { request, given } = splitRerunOptions(options);
      const planned = await planRerun(h.store, originId, h.lookup, request);
      if (isRefusal(planned)) return h.refuse(planned.chain, given.runId, planned.error, planned.input, given);
      const runId = given.runId ?? h.newRunId();
      return relayed(runId, planned.input, given, (follow) => h.submitter.rerun(planned, runId, follow), planned.plan.name);
    },
    cancel: async (runId) => (await h.submitter.cancel(runId))?.status === 'running',
    // Recorded and enqueued under the tick's id: whichever worker takes it runs it.
    fire: (plan, input, runId) => submit(plan.name, input, { runId }).then(() => 'fired' as const),
  };
}
