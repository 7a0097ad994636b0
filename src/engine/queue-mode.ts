import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunResult } from '../run-model/result.js';
import type { Clock } from '../common/clock.js';
import type { NewsListener, QueueSubmitter, Submission } from '../queue/submit.js';
import { relayNews } from './queue-relay.js';
import type { RunStartOptions } from '../runs/start-options.js';

// An engine made with `queue` executes nothing itself: `run` records the run, enqueues
// it and resolves with the RunResult the store has once a worker finished it; `submit` returns as
// soon as the run is enqueued. A run that cannot be submitted (Redis down, a bad run id) is a
// failed result, as a run that cannot start is in a local engine.

export interface QueueModeHost {
  readonly submitter: QueueSubmitter;
  readonly lookup: (name: string) => ChainPlan | undefined;
  /** The failed result of a run that could not start (unknown chain, queue unreachable). */
  readonly refuse: (chain: string, runId: string | undefined, error: { code: ErrorCode; message: string }, input: unknown, options: RunStartOptions) => RunResult;
  readonly unknownChain: (name: string) => { code: ErrorCode; message: string };
  /** The engine's run ids (unique across the processes that share a store). */
  readonly newRunId: () => string;
  readonly clock: Clock;
}

export function queueMode(h: QueueModeHost) {
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

  return {
    submit: async (name: string, input: unknown, options: RunStartOptions = {}): Promise<Submission> => h.submitter.submit(planNamed(name), input, options.runId ?? h.newRunId()),
    run(name: string, input: unknown, options: RunStartOptions): Promise<RunResult> {
      const runId = options.runId ?? h.newRunId();
      return relayed(runId, input, options, (follow) => h.submitter.submit(planNamed(name), input, runId, follow), name);
    },
    resume: (runId: string, options: RunStartOptions): Promise<RunResult> =>
      relayed(runId, undefined, options, (follow) => h.submitter.resume(runId, options.allowChanged === true, follow), '(unknown)'),
    cancel: async (runId: string): Promise<boolean> => (await h.submitter.cancel(runId))?.status === 'running',
  };
}
